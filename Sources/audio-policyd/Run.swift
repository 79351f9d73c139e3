import ArgumentParser
import AudioPolicyDaemon
import FoundationGaps
import Glibc
import SessionBus

/// `audio-policyd run`: the daemon, in the foreground.
///
/// When `audio-policyd-daemon` sits next to this executable (as `make install`, `scripts/run` and
/// `swift build` put it), `run` execs it with the same options: the same process (pid, descriptors,
/// environment: systemd and the tests see no difference), without this binary's command-line tools
/// mapped (docs/benchmarks.md, memory). Without it, the daemon runs in this process, the same code
/// (``DaemonLaunch/run(policy:socket:verbose:backend:nowPlaying:)``) either way.
struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: DaemonLaunch.abstract,
                                                    discussion: DaemonLaunch.discussion)

    @Option(name: .long, help: ArgumentHelp(DaemonLaunch.policyHelp))
    var policy: String?

    @OptionGroup var control: SocketOption

    @Flag(name: .shortAndLong, help: ArgumentHelp(DaemonLaunch.verboseHelp))
    var verbose = false

    @Option(name: .long, help: ArgumentHelp(BackendChoice.help))
    var backend: BackendChoice = .auto

    @Option(name: .long, help: ArgumentHelp(DaemonLaunch.nowPlayingHelp))
    var nowPlaying: NowPlayingName = .own

    func run() throws {
        let arguments = DaemonLaunch.Arguments(policy: policy, socket: control.socket, verbose: verbose,
                                               backend: backend, nowPlaying: nowPlaying)
        if let daemon = DaemonLaunch.daemonBesideThisExecutable() {
            Self.exec(daemon, arguments.commandLine)
        }
        let code = try DaemonLaunch.run(policy: policy, socket: control.socket, verbose: verbose, backend: backend,
                                        nowPlaying: nowPlaying)
        if code != 0 { throw ExitCode(code) }
    }

    /// Replaces this process by `executable` with `arguments`; returns only if that failed (said on
    /// standard error: the daemon then runs in this process).
    static func exec(_ executable: String, _ arguments: [String]) {
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        execv(executable, argv)
        let reason = String(cString: strerror(errno))
        argv.forEach { free($0) }
        StandardStream.error.write("audio-policyd: cannot run \(executable) (\(reason)); running the daemon in this process\n")
    }
}

extension NowPlayingName: ExpressibleByArgument {}
extension BackendChoice: ExpressibleByArgument {}
