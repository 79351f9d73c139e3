import ArgumentParser
import AudioPolicyDaemon
import ControlProtocol
import FoundationEssentials
import Glibc

/// `audio-policyd now-playing`: which app owns Now Playing, and its player.
struct NowPlaying: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "now-playing",
        abstract: "Show the app that owns Now Playing: the one media keys and `playerctl -p audiopolicy` control.",
        discussion: """
            The owner is the app that last started primary audio (music, video, a podcast) or whose player \
            last reported Playing, or a hook that claimed Now Playing; notifications and prompts never take it. \
            Prints `nobody` when nothing owns it.
            """)

    @OptionGroup var control: SocketOption

    @Flag(name: .long, help: "Print JSON: the owner (application, appID, pid, index, player, identity, playbackStatus, title, artist, claim) or null.")
    var json = false

    func run() throws {
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
