import AudioPolicy
import ControlProtocol
import Foundation
import Testing
import TestRequirements

/// The Now Playing app's last window closing (`closed-window`), on a real X11 display: Xvfb and openbox,
/// the daemon following `_NET_CLIENT_LIST`, and a player that lives on in the tray
/// (Tests/RealApps/bin/tray-player: a GTK window, an MPRIS player, a 440 Hz tone played in its own
/// process) whose window the window manager closes (`wmctrl -c`), while the process plays on, as
/// Rhythmbox, Spotify and Lollypop do. With `closed-window = "pause"` the player says Paused, its stream
/// is corked, the sink falls silent, it stays Now Playing, and the play key (our Now Playing player's
/// PlayPause, `playerctl -p audiopolicy`) resumes it. The control: the default plays on.
/// KWinFocusTests closes the same player's window under KWin.
@Suite("the Now Playing app's last window closing, on X11", .serialized, .needs(ClosedWindow.x11Missing))
final class ClosedWindowTests {
    let changes = Changes()
    let events: ServerEvents

    init() throws {
        events = try ServerEvents(changes: changes)
        _ = try Monitor.shared.get()
        try SoundServer.awaitQuiet(changes: changes)
    }

    @Test("closed-window = pause: the tray player's window closes, it is Paused (corked, silent), stays Now Playing and is never resumed by the daemon; the play key resumes it")
    func closingPauses() throws {
        try closeTheWindow(policy: ClosedWindow.policy, pauses: true)
    }

    @Test("control: the default policy (closed-window = nothing): the tray player's window closes and it plays on, still Now Playing")
    func defaultPlaysOn() throws {
        try closeTheWindow(policy: nil, pauses: false)
    }

    private func closeTheWindow(policy: String?, pauses: Bool) throws {
        let (xvfb, display) = try FocusDesktop.startXvfb(changes: changes)
        defer { xvfb.stop() }
        var environment = TestEnvironment.variables
        environment["DISPLAY"] = display
        environment["NO_AT_BRIDGE"] = "1"  // GTK: no accessibility bus to look for
        let openbox = try Child(["openbox"], environment: environment)
        defer { openbox.kill() }
        let daemon = try DaemonProcess(policy: policy, changes: changes, environment: ["DISPLAY": display],
                                       arguments: ["--now-playing", "mpris"])
        _ = try daemon.awaitLog("focus: following the active window on X display \(display)")
        let player = try TrayPlayer(environment: environment, changes: changes)
        try ClosedWindow.awaitNowPlaying(player, daemon, changes: changes)
        try changes.await("its window on the display", timeout: 10) { () throws -> Probe<Void> in
            let listed = try outcome(["wmctrl", "-l"], environment: environment).output
            return listed.contains(player.title) ? .done(()) : .waiting(listed)
        }
        let before = try Levels.record(seconds: 0.5).level(Tone.musicBand)
        #expect(before > -20, "the tray player's tone is not heard before its window closes: \(before) dB")

        let mark = daemon.logCount
        let closing = Date()
        let closed = try outcome(["wmctrl", "-c", player.title], environment: environment)
        #expect(closed.code == 0, "wmctrl -c: \(closed)")
        if pauses {
            let took = try ClosedWindow.expectPausedThenResumed(player, daemon, since: mark, closing: closing, changes: changes)
            let after = try Levels.record(seconds: 0.5).level(Tone.musicBand)
            #expect(abs(after - before) < 1, "resumed at \(after) dB, played at \(before) dB before")
            _ = took.resumed
            print(String(format: "[%@] closed-window: tone %.1f dB before, %.1f dB paused, %.1f dB after the play key; "
                            + "Paused and corked %.0f ms after wmctrl -c", TestEnvironment.serverKind, before, took.level,
                         after, took.seconds * 1000))
        } else {
            try ClosedWindow.expectPlaysOn(player, daemon, since: mark, changes: changes)
            let after = try Levels.record(seconds: 0.5).level(Tone.musicBand)
            #expect(abs(after - before) < 1, "played at \(before) dB before its window closed, \(after) dB after")
            print(String(format: "[%@] closed-window control: tone %.1f dB before, %.1f dB 2 s after its window closed",
                         TestEnvironment.serverKind, before, after))
        }
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }
}

/// What the closed-window tests check once a tray player's window was closed, whichever desktop closed it.
enum ClosedWindow {
    /// The drop-in that opts media in: `[class.primary] closed-window = "pause"`.
    static let policy = TestEnvironment.packageRoot.appendingPathComponent("Tests/Policies/closed-window-pauses.toml").path

    /// Why the X11 test cannot run here, or nil.
    static let x11Missing: String? = FocusDesktop.missing ?? TrayPlayer.missing
        ?? (SessionBus.installed("wmctrl") ? nil : "needs wmctrl (apt-get install wmctrl)")

    static func awaitNowPlaying(_ player: TrayPlayer, _ daemon: DaemonProcess, changes: Changes) throws {
        try changes.await("the tray player to own Now Playing", timeout: 10) { () throws -> Probe<Void> in
            let status = try daemon.status()
            return owns(status, player) ? .done(()) : .waiting(DaemonTests.describe(status))
        }
    }

    static func owns(_ status: StatusReport, _ player: TrayPlayer) -> Bool {
        status.nowPlaying?.pid == Int(player.pid) && status.nowPlaying?.player == TrayPlayer.busName
    }

    /// With `closed-window = "pause"`: the player says Paused and its stream is corked, the decision is
    /// logged, the sink is silent, it stays Paused and Now Playing for 1.5 s, and the play key (our Now
    /// Playing player's PlayPause) resumes it, its tone heard again. Returns how long after `closing` it was
    /// paused and corked, and the tone's level while paused and once resumed.
    static func expectPausedThenResumed(_ player: TrayPlayer, _ daemon: DaemonProcess, since mark: Int, closing: Date,
                                        changes: Changes) throws -> (seconds: Double, level: Double, resumed: Double) {
        try awaitWindowClosed(player, changes: changes)
        try changes.await("the tray player Paused, its stream corked", timeout: 5) { () throws -> Probe<Void> in
            let now = try player.currentStream()
            let status = try player.status()
            return status == "Paused" && now.corked ? .done(()) : .waiting("\(status), \(now)")
        }
        let seconds = Date().timeIntervalSince(closing)
        let decision = try daemon.awaitLog("the Now Playing app's last window closed (class primary: closed-window = pause)",
                                           after: mark)
        #expect(decision.contains("paused indefinitely (stays Now Playing)"), "\(decision)")
        let during = try Levels.record(seconds: 0.5).level(Tone.musicBand)
        #expect(during < -60, "the sink still plays the tray player's tone: \(during) dB")
        // Not resumed by the daemon: Paused and Now Playing for a while, with nothing else going on.
        try changes.watch(for: 1.5) {
            let status = try daemon.status()
            try #require(try player.status() == "Paused", "resumed behind the user's back")
            try #require(owns(status, player), "Now Playing moved: \(DaemonTests.describe(status))")
        }
        #expect(try player.playerctl("audiopolicy", "status") == "Paused")
        // The play key: our Now Playing player's PlayPause reaches the tray player without its window.
        try player.playerctl("audiopolicy", "play-pause")
        try changes.await("the play key to resume the tray player", timeout: 5) { () throws -> Probe<Void> in
            let now = try player.currentStream()
            let status = try player.status()
            return status == "Playing" && !now.corked ? .done(()) : .waiting("\(status), \(now)")
        }
        #expect(owns(try daemon.status(), player), "Now Playing moved after the play key")
        // Its tone back on the sink: GStreamer's live source may take a moment after the uncork.
        let resumed = try changes.await("the tray player's tone on the sink again", timeout: 5) { () throws -> Probe<Double> in
            let level = try Levels.record(seconds: 0.3).level(Tone.musicBand)
            return level > -20 ? .done(level) : .waiting("\(level) dB, its stream \(try player.currentStream()); the daemon since the window closed: \(daemon.log[mark...].joined(separator: "\n"))")
        }
        return (seconds, during, resumed)
    }

    /// The control: the player plays on (Playing, uncorked) for 2 s after its window closed, still Now
    /// Playing; the decision says why, when the daemon was told (`told`).
    static func expectPlaysOn(_ player: TrayPlayer, _ daemon: DaemonProcess, since mark: Int, told: Bool = true,
                              changes: Changes) throws {
        try awaitWindowClosed(player, changes: changes)
        try changes.watch(for: 2) {
            let now = try player.currentStream()
            try #require(try player.status() == "Playing", "paused after its window closed")
            try #require(!now.corked, "its stream was corked: \(now)")
        }
        if told {
            let decision = try daemon.awaitLog("the Now Playing app's last window closed", after: mark)
            #expect(decision.contains("plays on (class primary: closed-window = nothing)"), "\(decision)")
        }
        let status = try daemon.status()
        #expect(owns(status, player), "Now Playing: \(DaemonTests.describe(status))")
    }

    private static func awaitWindowClosed(_ player: TrayPlayer, changes: Changes) throws {
        try changes.await("the tray player to say its window closed", timeout: 5) { () -> Probe<Void> in
            player.lines.contains("window closed") ? .done(()) : .waiting("\(player.lines)")
        }
    }
}
