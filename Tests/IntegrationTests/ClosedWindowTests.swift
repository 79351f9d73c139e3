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
@Suite("the Now Playing app's last window closing, on X11", .serialized, .needs(TrayPlayer.missing))
final class ClosedWindowTests {
    let changes = Changes()
    let events: ServerEvents

    init() throws {
        events = try ServerEvents(changes: changes)
        _ = try Monitor.shared.get()
        try changes.await("a server with no streams (left over, or another suite's: run with --no-parallel)",
                          timeout: 5) { () throws -> Probe<Void> in
            let left = try SoundServer.streams()
            return left.isEmpty ? .done(()) : .waiting("\(left)")
        }
    }

    @Test("closed-window = pause: the tray player's window closes, it is Paused (corked, silent), stays Now Playing and is never resumed by the daemon; the play key resumes it")
    func closingPauses() throws {
        try closeTheWindow(policy: "Tests/Policies/closed-window-pauses.toml", pauses: true)
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
        let policyPath = policy.map { TestEnvironment.packageRoot.appendingPathComponent($0).path }
        let daemon = try DaemonProcess(policy: policyPath, changes: changes, environment: ["DISPLAY": display],
                                       arguments: ["--now-playing", "mpris"])
        _ = try daemon.awaitLog("focus: following the active window on X display \(display)")

        let title = "tray player \(getpid())-\(UInt32.random(in: 0..<1_000_000))"
        let said = Pipe()
        let player = try Child([TrayPlayer.launcher, title], environment: environment, standardOutput: said)
        defer { player.kill() }
        let lines = LineLog(reading: said, changes: changes)
        // pulsesink opens a corked stream, closes it and opens the one it plays on: await that one.
        let stream = try changes.await("the tray player's stream, playing", timeout: 10) { () throws -> Probe<ServerStream> in
            if let code = player.exitCode { throw CommandFailure(description: "tray-player exited with \(code)") }
            let streams = try SoundServer.streams()
            return streams.first { $0.pid == player.pid && !$0.corked }.map { .done($0) } ?? .waiting("\(streams)")
        }
        try awaitStatus(daemon, "the tray player to own Now Playing") { Self.ownsNowPlaying($0, player) }
        try changes.await("its window on the display", timeout: 10) { () throws -> Probe<Void> in
            let listed = try outcome(["wmctrl", "-l"], environment: environment).output
            return listed.contains(title) ? .done(()) : .waiting(listed)
        }
        let before = try Levels.record(seconds: 0.5).level(Tone.musicBand)
        #expect(before > -20, "the tray player's tone is not heard before its window closes: \(before) dB")

        let mark = daemon.logCount
        let closing = Date()
        let closed = try outcome(["wmctrl", "-c", title], environment: environment)
        #expect(closed.code == 0, "wmctrl -c: \(closed)")
        try changes.await("the tray player to say its window closed", timeout: 5) { () -> Probe<Void> in
            lines.lines().contains("window closed") ? .done(()) : .waiting("\(lines.lines())")
        }
        if pauses {
            try changes.await("the tray player Paused, its stream corked", timeout: 5) { () throws -> Probe<Void> in
                let now = try SoundServer.current(stream.index, of: "trayplayer")
                let status = try SessionBus.playerctl("trayplayer", "status")
                return status == "Paused" && now.corked ? .done(()) : .waiting("\(status), \(now)")
            }
            let pausedAfter = Date().timeIntervalSince(closing)
            let decision = try daemon.awaitLog("the Now Playing app's last window closed (class primary: closed-window = pause)",
                                               after: mark)
            #expect(decision.contains("paused indefinitely (stays Now Playing)"), "\(decision)")
            let during = try Levels.record(seconds: 0.5).level(Tone.musicBand)
            #expect(during < -60, "the sink still plays the tray player's tone: \(during) dB")
            // Not resumed by the daemon: Paused and Now Playing for a while, with nothing else going on.
            try changes.watch(for: 1.5) {
                let status = try daemon.status()
                try #require(try SessionBus.playerctl("trayplayer", "status") == "Paused", "resumed behind the user's back")
                try #require(Self.ownsNowPlaying(status, player), "Now Playing moved: \(DaemonTests.describe(status))")
            }
            #expect(try SessionBus.playerctl("audiopolicy", "status") == "Paused")
            // The play key: our Now Playing player's PlayPause reaches the tray player without its window.
            try SessionBus.playerctl("audiopolicy", "play-pause")
            try changes.await("the play key to resume the tray player", timeout: 5) { () throws -> Probe<Void> in
                let now = try SoundServer.current(stream.index, of: "trayplayer")
                let status = try SessionBus.playerctl("trayplayer", "status")
                return status == "Playing" && !now.corked ? .done(()) : .waiting("\(status), \(now)")
            }
            let after = try Levels.record(seconds: 0.5).level(Tone.musicBand)
            #expect(abs(after - before) < 1, "resumed at \(after) dB, played at \(before) dB before")
            print(String(format: "[%@] closed-window: tone %.1f dB before, %.1f dB paused, %.1f dB after the play key; "
                            + "Paused and corked %.0f ms after wmctrl -c", TestEnvironment.serverKind, before, during,
                         after, pausedAfter * 1000))
        } else {
            try changes.watch(for: 2) {
                let now = try SoundServer.current(stream.index, of: "trayplayer")
                try #require(try SessionBus.playerctl("trayplayer", "status") == "Playing", "the default paused it")
                try #require(!now.corked, "its stream was corked: \(now)")
            }
            let decision = try daemon.awaitLog("the Now Playing app's last window closed", after: mark)
            #expect(decision.contains("plays on (class primary: closed-window = nothing)"), "\(decision)")
            let after = try Levels.record(seconds: 0.5).level(Tone.musicBand)
            #expect(abs(after - before) < 1, "played at \(before) dB before its window closed, \(after) dB after")
            print(String(format: "[%@] closed-window control: tone %.1f dB before, %.1f dB 2 s after its window closed",
                         TestEnvironment.serverKind, before, after))
        }
        let status = try daemon.status()
        #expect(Self.ownsNowPlaying(status, player), "Now Playing: \(DaemonTests.describe(status))")
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    private static func ownsNowPlaying(_ status: StatusReport, _ player: Child) -> Bool {
        status.nowPlaying?.pid == Int(player.pid) && status.nowPlaying?.player == TrayPlayer.busName
    }

    @discardableResult
    private func awaitStatus(_ daemon: DaemonProcess, _ what: String, timeout: Double = 10,
                             _ condition: (StatusReport) throws -> Bool) throws -> StatusReport {
        try changes.await(what, timeout: timeout) { () throws -> Probe<StatusReport> in
            let status = try daemon.status()
            return try condition(status) ? .done(status) : .waiting(DaemonTests.describe(status))
        }
    }
}

/// The tray player the test closes the window of: Tests/RealApps/bin/tray-player.
enum TrayPlayer {
    static let launcher = TestEnvironment.packageRoot.appendingPathComponent("Tests/RealApps/bin/tray-player").path
    static let busName = "org.mpris.MediaPlayer2.trayplayer"

    /// Why the test cannot run here, or nil: the X11 focus test's tools, the session bus and server,
    /// wmctrl, and the player's Python modules (GTK 3, GStreamer with pulsesink, dbus).
    static let missing: String? = {
        if let missing = FocusDesktop.missing ?? SessionBus.missing { return missing }
        if !SessionBus.installed("wmctrl") { return "needs wmctrl (apt-get install wmctrl)" }
        let probe = """
            import gi, dbus.mainloop.glib
            gi.require_version('Gst', '1.0'); gi.require_version('Gtk', '3.0')
            from gi.repository import Gst, Gtk
            Gst.init(None)
            assert Gst.ElementFactory.find('pulsesink') and Gst.ElementFactory.find('audiotestsrc')
            """
        guard let result = try? outcome(["/usr/bin/python3", "-c", probe]), result.code == 0 else {
            return "needs python3-gi, gir1.2-gtk-3.0, gir1.2-gstreamer-1.0, gstreamer1.0-plugins-good and python3-dbus (scripts/test installs them)"
        }
        return nil
    }()
}
