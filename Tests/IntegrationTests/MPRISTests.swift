import AudioPolicy
import ControlProtocol
import Foundation
import SessionBus
import Testing
import TestRequirements

// MPRIS on real components: the built daemon, a real sound server, a private session bus (both from
// scripts/sound-server), mpv with the mpv-mpris plugin as the player, and playerctl as the user's
// remote control. What is asserted is what a user sees: `playerctl status`, the sink's streams, the
// sound the sink played.
//
//   eval "$(scripts/sound-server start pulseaudio /tmp/mp-pa)"     # also starts the session bus
//   AUDIO_POLICYD_BIN=$PWD/.build/debug/audio-policyd swift test --no-parallel --filter MPRIS
//   scripts/sound-server stop /tmp/mp-pa
//
// The tests are declared in extensions of this type, one file per theme (MPRISTests: pausing and
// resuming, Now Playing; MPRISHookTests: interrupt, monitor, claim, the protocol, the mpv hook).

@Suite(
    "MPRIS: real players on a private session bus",
    .serialized,
    .needs(SessionBus.missing)
)
final class MPRISTests {
    /// Server events, daemon log lines, playerctl's status changes: what every wait wakes on.
    let changes = Changes()
    let events: ServerEvents
    private var daemons: [DaemonProcess] = []
    private var players: [Player] = []
    private var mpvs: [MPV] = []
    var children: [Child] = []

    init() throws {
        events = try ServerEvents(changes: changes)
        _ = try Monitor.shared.get()
        try SoundServer.awaitQuiet(changes: changes)
    }

    deinit {
        for daemon in daemons where daemon.isRunning { _ = daemon.terminate(timeout: 2) }
        daemons.removeAll()
        children.removeAll()
        mpvs.removeAll()
        players.removeAll()
    }

    // MARK: - Starting things

    /// The daemon, on `policy` (a file) or the built-in default, with its Now Playing player published in
    /// the MPRIS namespace (`--now-playing mpris`: these tests drive it with `playerctl -p audiopolicy`)
    /// unless `nowPlaying` says otherwise.
    func startDaemon(policy: String? = nil, nowPlaying: String = "mpris") throws -> DaemonProcess {
        let daemon = try DaemonProcess(policy: policy, changes: changes, arguments: ["--now-playing", nowPlaying])
        daemons.append(daemon)
        return daemon
    }

    /// mpv playing `tone` (the music, by default), its MPRIS name on the bus and its stream on the server.
    func startMPV(_ tone: Tone = .music, scripts: [String] = [], options: [String] = [],
                  sandbox: FlatpakSandbox? = nil) throws -> MPV {
        let mpv = try MPV(tone, scripts: scripts, options: options, sandbox: sandbox, changes: changes)
        mpvs.append(mpv)
        try mpv.awaitStream()
        try mpv.awaitStatus("Playing")
        return mpv
    }

    func play(_ tone: Tone, role: String?, name: String) throws -> Player {
        let player = try Player(tone, role: role, name: name, changes: changes)
        players.append(player)
        try player.awaitStream()
        return player
    }

    /// Starts a command (the daemon binary's subcommands run this way), its output kept.
    func start(_ arguments: [String], output: Pipe? = nil) throws -> Child {
        let child = try Child(arguments, standardOutput: output)
        children.append(child)
        return child
    }

    // MARK: - Waiting

    @discardableResult
    func awaitStatus(_ daemon: DaemonProcess, _ what: String, timeout: Double = 5,
                     _ condition: (StatusReport) throws -> Bool) throws -> StatusReport {
        try daemon.tellingItsLog {
            try changes.await(what, timeout: timeout) { () throws -> Probe<StatusReport> in
                let status = try daemon.status()
                return try condition(status) ? .done(status) : .waiting(DaemonTests.describe(status)
                    + "; owner player: \(status.nowPlaying?.player ?? "none")")
            }
        }
    }

    /// Waits until `mpv` owns Now Playing (after the grace time of a stream the daemon saw start).
    func awaitNowPlaying(_ mpv: MPV, _ daemon: DaemonProcess, timeout: Double = 5) throws {
        try awaitStatus(daemon, "\(mpv.busName) to own Now Playing", timeout: timeout) {
            $0.nowPlaying?.player == mpv.busName && $0.nowPlaying?.pid == Int(mpv.pid)
        }
    }

    @discardableResult
    func awaitStream(_ mpv: MPV, _ what: String, timeout: Double = 5,
                     _ condition: (ServerStream) throws -> Bool) throws -> ServerStream {
        try changes.await("mpv: \(what)", timeout: timeout) { () throws -> Probe<ServerStream> in
            let now = try mpv.stream()
            return try condition(now) ? .done(now) : .waiting("\(now)")
        }
    }

    /// Requires `mpv` to stay `wanted` for `seconds`, waking on every piece of news.
    func expectStays(_ mpv: MPV, _ wanted: String, for seconds: Double, _ why: String) throws {
        try changes.watch(for: seconds) {
            let now = try mpv.status()
            try #require(now == wanted, "\(why): mpv is \(now)")
        }
    }

    /// What the sink plays next (from `past` seconds back: see ``Levels/record(seconds:past:)``).
    func record(seconds: Double = 0.5, past: Double = 0) throws -> Recording {
        try Levels.record(seconds: seconds, past: past)
    }
}

// MARK: - Pausing and resuming through the player

extension MPRISTests {
    @Test("a second music app pauses mpv through MPRIS (Paused, not muted), and it stays Paused after that app ends")
    func secondMusicAppPausesMPV() throws {
        let mpv = try startMPV()
        let daemon = try startDaemon()
        try awaitNowPlaying(mpv, daemon)
        let mark = daemon.logCount

        let second = try play(.otherMusic, role: "music", name: "music-two")
        try mpv.awaitStatus("Paused", timeout: 4)
        try daemon.awaitLog("Pause \(mpv.busName)", after: mark)
        // Paused by its player: corked, never muted, and at the user's volume again once the grace
        // time's duck is restored.
        try awaitStream(mpv, "corked, unmuted") { $0.corked && !$0.muted }
        try awaitStatus(daemon, "music-two to own Now Playing") { $0.nowPlaying?.pid == Int(second.pid) }

        second.stop()
        try events.awaitRemoval(of: try #require(second.index))
        try expectStays(mpv, "Paused", for: 1.5, "another app's music paused it for good")
        #expect(!daemon.log.dropFirst(mark).contains { $0.contains("Play \(mpv.busName)") })
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    @Test("a call pauses mpv through MPRIS, and mpv plays again after the call")
    func callPausesAndResumesMPV() throws {
        let mpv = try startMPV()
        let daemon = try startDaemon()
        let before = try record().level(Tone.musicBand)
        #expect(before > -30, "mpv is not audible: \(before) dB")

        let call = try play(.long, role: "phone", name: "call-app")
        try mpv.awaitStatus("Paused", timeout: 3)
        let during = try record()
        #expect(try during.level(Tone.musicBand) < -60, "mpv is audible during the call")
        #expect(try during.level(Tone.promptBand) > -30, "the call is not audible")
        #expect(try daemon.stream(mpv.index)?.state == .paused)
        #expect(try !mpv.stream().muted, "paused by muting, not through the player")

        call.stop()
        try events.awaitRemoval(of: try #require(call.index))
        try mpv.awaitStatus("Playing", timeout: 4)
        let after = try record().level(Tone.musicBand)
        #expect(abs(after - before) <= 1, "mpv played at \(after) dB after the call, \(before) dB before")
        #expect(try daemon.stream(mpv.index)?.state == .playing)
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    @Test("a player the user paused before a call stays paused after it")
    func userPausedBeforeCallStaysPaused() throws {
        let mpv = try startMPV()
        let daemon = try startDaemon()
        try SessionBus.playerctl(mpv.name, "pause")
        try mpv.awaitStatus("Paused")
        try awaitStatus(daemon, "the daemon to see mpv paused") { status in
            status.streams.first { $0.index == mpv.index }?.state == .paused
        }
        let mark = daemon.logCount

        let call = try play(.long, role: "phone", name: "call-app")
        try daemon.awaitLog("class=call", after: mark)
        call.stop()
        try events.awaitRemoval(of: try #require(call.index))
        try expectStays(mpv, "Paused", for: 1.5, "the user paused it before the call")
        let asked = daemon.log.dropFirst(mark).filter { $0.contains("Pause \(mpv.busName)") || $0.contains("Play \(mpv.busName)") }
        #expect(asked.isEmpty, "the daemon acted on a player the user had paused: \(asked)")
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    @Test("a player the user paused during a call stays paused after it")
    func userPausedDuringCallStaysPaused() throws {
        let mpv = try startMPV()
        let daemon = try startDaemon()
        let call = try play(.long, role: "phone", name: "call-app")
        try mpv.awaitStatus("Paused", timeout: 3)

        // The user takes over during the call: plays (that wins over the call), then pauses.
        try SessionBus.playerctl(mpv.name, "play")
        try mpv.awaitStatus("Playing")
        try expectStays(mpv, "Playing", for: 0.5, "the user's play wins for the rest of the call")
        try SessionBus.playerctl(mpv.name, "pause")
        try mpv.awaitStatus("Paused")
        try awaitStatus(daemon, "the daemon to see mpv paused by the user") { status in
            status.streams.first { $0.index == mpv.index }?.state == .paused
        }
        let mark = daemon.logCount

        call.stop()
        try events.awaitRemoval(of: try #require(call.index))
        try expectStays(mpv, "Paused", for: 1.5, "the user paused it during the call")
        #expect(!daemon.log.dropFirst(mark).contains { $0.contains("Play \(mpv.busName)") })
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }
}

// MARK: - Now Playing

extension MPRISTests {
    @Test("`playerctl -p audiopolicy` mirrors the Now Playing owner and play-pause reaches it, also after the owner changes")
    func nowPlayingPlayerReachesTheOwner() throws {
        let first = try startMPV()
        let daemon = try startDaemon()
        try awaitNowPlaying(first, daemon)
        #expect(try SessionBus.playerctl("audiopolicy", "status") == "Playing")
        #expect(try SessionBus.playerctl("audiopolicy", "metadata", "xesam:title")
            == SessionBus.playerctl(first.name, "metadata", "xesam:title"))

        try SessionBus.playerctl("audiopolicy", "play-pause")
        try first.awaitStatus("Paused")
        try changes.await("audiopolicy to mirror Paused", timeout: 3) { () throws -> Probe<Void> in
            let now = try SessionBus.playerctl("audiopolicy", "status")
            return now == "Paused" ? .done(()) : .waiting(now)
        }
        try SessionBus.playerctl("audiopolicy", "play-pause")
        try first.awaitStatus("Playing")

        // A second mpv takes over: after its grace time it owns Now Playing and the first is paused.
        let second = try startMPV(.otherMusic)
        try first.awaitStatus("Paused", timeout: 4)
        try awaitNowPlaying(second, daemon)
        let json = try run(TestEnvironment.daemonBinary, "now-playing", "--json", "--socket", daemon.socketPath)
        let owner = try DaemonTests.object(json)
        #expect(owner["player"] as? String == second.busName, "\(json)")
        #expect(owner["playbackStatus"] as? String == "Playing", "\(json)")

        // The keys now reach the second, and never the first.
        try SessionBus.playerctl("audiopolicy", "play-pause")
        try second.awaitStatus("Paused")
        try SessionBus.playerctl("audiopolicy", "play-pause")
        try second.awaitStatus("Playing")
        try expectStays(first, "Paused", for: 0.3, "the keys reached the old owner")
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    @Test("by default Now Playing is published outside the MPRIS namespace: no second card (playerctl lists only mpv), and `now-playing --send` reaches the owner")
    func defaultNowPlayingMakesNoSecondCard() throws {
        let mpv = try startMPV()
        let daemon = try startDaemon(nowPlaying: "own")
        try awaitNowPlaying(mpv, daemon)
        try changes.await("our player on the bus as org.audiopolicyd.NowPlaying", timeout: 3) { () throws -> Probe<Void> in
            let status = try Self.ownPlayerStatus("org.audiopolicyd.NowPlaying")
            return status == "Playing" ? .done(()) : .waiting(status)
        }
        // What GNOME Shell, Plasma and swaync show a card for, and playerctld follows: every MPRIS name.
        let listed = try run(["playerctl", "-l"], timeout: 5).split(separator: "\n").map(String.init)
        #expect(listed == [mpv.name], "MPRIS players listed: \(listed)")

        let sent = try run(TestEnvironment.daemonBinary, "now-playing", "--send", "play-pause", "--socket", daemon.socketPath)
        #expect(sent.contains(mpv.busName), "\(sent)")
        try mpv.awaitStatus("Paused")
        _ = try run(TestEnvironment.daemonBinary, "now-playing", "--send", "play-pause", "--socket", daemon.socketPath)
        try mpv.awaitStatus("Playing")
        // The same key over D-Bus, as a desktop's key binding may send it.
        _ = try run(["dbus-send", "--session", "--print-reply", "--dest=org.audiopolicyd.NowPlaying", "/org/mpris/MediaPlayer2",
                     "org.mpris.MediaPlayer2.Player.PlayPause"], timeout: 5)
        try mpv.awaitStatus("Paused")
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    @Test("control: `--now-playing mpris` publishes a second MPRIS player (a second card in GNOME Shell); with nothing playing `--send` fails")
    func mprisNowPlayingIsASecondPlayer() throws {
        let daemon = try startDaemon(nowPlaying: "mpris")
        let refused = try outcome([TestEnvironment.daemonBinary, "now-playing", "--send", "play-pause", "--socket", daemon.socketPath])
        #expect(refused.code != 0 && refused.errors.contains("nothing owns Now Playing"), "\(refused)")
        let mpv = try startMPV()
        try awaitNowPlaying(mpv, daemon)
        try changes.await("playerctl to list audiopolicy beside mpv", timeout: 3) { () throws -> Probe<Void> in
            let listed = try run(["playerctl", "-l"], timeout: 5).split(separator: "\n").map(String.init).sorted()
            return listed == ["audiopolicy", mpv.name].sorted() ? .done(()) : .waiting("\(listed)")
        }
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    /// Our player's PlaybackStatus, read over D-Bus by its bus name ("" when it is not there).
    static func ownPlayerStatus(_ busName: String) throws -> String {
        let reply = (try? run(["dbus-send", "--session", "--print-reply", "--dest=\(busName)", "/org/mpris/MediaPlayer2",
                               "org.freedesktop.DBus.Properties.Get", "string:org.mpris.MediaPlayer2.Player",
                               "string:PlaybackStatus"], timeout: 5)) ?? ""
        return reply.split(separator: "\"").dropFirst().first.map(String.init) ?? ""
    }

    @Test("when the owner's player leaves the bus, Now Playing passes back to the previous player")
    func ownerQuittingHandsNowPlayingBack() throws {
        let first = try startMPV()
        let daemon = try startDaemon()
        try awaitNowPlaying(first, daemon)
        let second = try startMPV(.otherMusic)
        try awaitNowPlaying(second, daemon)
        try first.awaitStatus("Paused")

        second.kill()
        try awaitNowPlaying(first, daemon)
        // mpv-mpris signals PlaybackStatus a moment after playerctl can read it: await the mirror.
        try changes.await("audiopolicy to mirror the first mpv's Paused", timeout: 3) { () throws -> Probe<Void> in
            let shown = try SessionBus.playerctl("audiopolicy", "status")
            return shown == "Paused" ? .done(()) : .waiting(shown)
        }
        try SessionBus.playerctl("audiopolicy", "play")
        try first.awaitStatus("Playing")
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }
}
