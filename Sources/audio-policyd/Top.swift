import ArgumentParser
import AudioPolicyTools
import FoundationEssentials
import Glibc

/// `audio-policyd top`: a live view of the running daemon.
struct Top: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A live view of every stream: class, state, volume and policy factor, Now Playing, the last decisions.",
        discussion: """
            Refreshes in place (on the daemon's events, else once a second). q or Ctrl-C quits and \
            restores the terminal. When standard output is not a terminal, prints one plain snapshot.
            """)

    @OptionGroup var control: SocketOption

    @Flag(name: .long, help: "Print one plain snapshot and exit, even on a terminal.")
    var once = false

    func run() throws {
        let viewer = TopViewer(socketPath: control.path)
        if once || !viewer.terminal.isInteractive {
            if !viewer.printOnce() { throw ExitCode.failure }
            return
        }
        let code = try viewer.run()
        if code != 0 { throw ExitCode(code) }
    }
}
