import ArgumentParser
import AudioPolicyDaemon
import ControlProtocol
import FoundationEssentials
import Glibc

/// `audio-policyd now-playing`: which app owns Now Playing, and its player.
struct NowPlaying: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "now-playing",
        abstract: "Show the app that owns Now Playing, or send it a media key (--send play-pause).",
        discussion: """
            The owner is the app that last started primary audio (music, video, a podcast) or whose player \
            last reported Playing, or a hook that claimed Now Playing; notifications and prompts never take it. \
            Prints `nobody` when nothing owns it. With --send, the key goes to the owner's MPRIS player (or the \
            hook that claimed it): bind the media keys to `audio-policyd now-playing --send play-pause` and so \
            on where the desktop lets you (sway, i3, any window manager).
            """)

    @OptionGroup var control: SocketOption

    @Flag(name: .long, help: "Print JSON: the owner (application, appID, pid, index, player, identity, playbackStatus, title, artist, claim) or null.")
    var json = false

    @Option(name: .long, help: "Send a media key to the owner: play-pause, play, pause, stop, next or previous.")
    var send: MediaKey?

    /// A media key, as the command line names it, and the MPRIS method it is.
    enum MediaKey: String, CaseIterable, ExpressibleByArgument {
        case playPause = "play-pause", play, pause, stop, next, previous

        var method: String {
            switch self {
            case .playPause: "PlayPause"
            case .play: "Play"
            case .pause: "Pause"
            case .stop: "Stop"
            case .next: "Next"
            case .previous: "Previous"
            }
        }
    }

    func run() throws {
        if let send {
            let client = try ControlClient(path: control.path)
            let reply = try client.request(ControlRequest(id: .number(1), op: .command, command: send.method))
            guard reply.ok else { throw ValidationError(reply.error ?? "the daemon refused \(send.method)") }
            print("\(send.method) sent to \(reply.sentTo ?? "the Now Playing owner")")
            return
        }
        let status = try DaemonStatus.fetch(path: control.path)
        if json {
            print(try status.nowPlaying.map(DaemonStatus.json) ?? "null")
            return
        }
        guard let owner = status.nowPlaying else {
            print("nobody")
            return
        }
        var first = StatusReport.label(application: owner.application, appID: owner.appID)
        if let pid = owner.pid { first += " (pid \(pid))" }
        if let index = owner.index { first += ", stream \(index)" }
        print(first)
        if let player = owner.player {
            print("player: \(player)\(owner.identity.map { " (\($0))" } ?? ""): \(owner.playbackStatus ?? "status unknown")")
        } else if let claim = owner.claim {
            print("claimed by a hook (\(claim))\(owner.playbackStatus.map { ": \($0)" } ?? "")")
        } else {
            print("player: none (media keys cannot reach it)")
        }
        if let title = owner.title { print("title: \(title)") }
        if let artist = owner.artist { print("artist: \(artist)") }
    }
}
