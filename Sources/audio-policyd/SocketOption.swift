import ArgumentParser
import AudioPolicyDaemon
import ControlProtocol

/// `--socket PATH`, for every command that talks to the daemon: one definition, one default.
struct SocketOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(DaemonLaunch.socketHelp))
    var socket: String?

    /// The socket to use: the one given, else the daemon's default.
    var path: String { socket ?? ControlSocketPath.default() }
}
