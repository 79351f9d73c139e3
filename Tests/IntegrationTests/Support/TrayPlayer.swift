import Foundation

/// Tests/RealApps/bin/tray-player, running: one window titled `title`, an MPRIS player
/// (`org.mpris.MediaPlayer2.trayplayer`) and its tone's stream on the test server. It says `playing`,
/// `paused` and `window closed` on its standard output, which wakes the tests' waits. `deinit` kills it.
final class TrayPlayer {
    static let launcher = TestEnvironment.packageRoot.appendingPathComponent("Tests/RealApps/bin/tray-player").path
    static let busName = "org.mpris.MediaPlayer2.trayplayer"

    /// Why it cannot run here, or nil: its Python modules (GTK 3, GStreamer with pulsesink and
    /// audiotestsrc, dbus) and a session bus and server.
    static let missing: String? = {
        if let missing = SessionBus.missing { return missing }
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

    let title: String
    private let child: Child
    private let said: LineLog
    private let complaints: LineLog
    private let environment: [String: String]
    /// Its stream, the one it plays on (pulsesink opens a corked stream, closes it and opens this one).
    private(set) var stream: ServerStream

    /// Starts it in `environment` (a display, a session bus, the test server) and awaits its playing stream.
    init(environment: [String: String], changes: Changes) throws {
        title = "tray player \(getpid())-\(UInt32.random(in: 0..<1_000_000))"
        self.environment = environment
        let output = Pipe(), errors = Pipe()
        child = try Child([Self.launcher, title], environment: environment, standardOutput: output, standardError: errors)
        said = LineLog(reading: output, changes: changes)
        complaints = LineLog(reading: errors, changes: changes)
        let (child, complaints) = (child, complaints)
        stream = try changes.await("the tray player's stream, playing", timeout: 10) { () throws -> Probe<ServerStream> in
            if let code = child.exitCode {
                throw CommandFailure(description: "tray-player exited with \(code): \(complaints.lines().joined(separator: "\n"))")
            }
            let streams = try SoundServer.streams()
            return streams.first { $0.pid == child.pid && !$0.corked }.map { .done($0) } ?? .waiting("\(streams)")
        }
        // The server restores a saved mute by app name: once (PipeWire, a run of the X11, GNOME Shell and
        // KWin tests) every later tray player started muted, and the tests failed far from the cause.
        if stream.muted {
            throw CommandFailure(description: "the tray player's stream started muted: the server's saved entry "
                                    + "for trayplayer is muted (left by an earlier run?): \(stream)")
        }
    }

    /// Kills it and awaits its stream and its MPRIS name gone, so that the next tray player is the only one.
    func quit(changes: Changes) throws {
        child.kill()
        let (index, pid) = (stream.index, child.pid)
        try changes.await("the tray player gone from the server and the bus", timeout: 5) { () throws -> Probe<Void> in
            let left = try SoundServer.stream(index)
            let owner = busOwner()
            return left == nil && owner != pid ? .done(()) : .waiting("stream \(left.map { "\($0)" } ?? "gone"), name owner \(owner.map(String.init) ?? "none")")
        }
    }

    deinit { child.kill() }

    var pid: Int32 { child.pid }

    /// What it said so far, one line each (`playing`, `paused`, `window closed`).
    var lines: [String] { said.lines() }

    /// `playerctl -p trayplayer status` on its bus: `Playing` or `Paused`.
    func status() throws -> String {
        try playerctl("trayplayer", "status")
    }

    /// `playerctl -p PLAYER ARGUMENTS...` on its session bus (our Now Playing player is `audiopolicy`).
    @discardableResult
    func playerctl(_ player: String, _ arguments: String...) throws -> String {
        let result = try outcome(["playerctl", "-p", player] + arguments, environment: environment)
        guard result.code == 0 else { throw CommandFailure(description: "playerctl -p \(player) \(arguments): \(result)") }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The pid that owns its MPRIS name on its bus, nil when nobody does.
    private func busOwner() -> Int32? {
        let asked = try? outcome(["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus",
                                  "/org/freedesktop/DBus", "org.freedesktop.DBus.GetConnectionUnixProcessID",
                                  "string:\(Self.busName)"], environment: environment)
        guard let asked, asked.code == 0 else { return nil }
        return asked.output.split(separator: "\n").last.flatMap { $0.split(separator: " ").last }.flatMap { Int32($0) }
    }

    /// Its stream as the server reports it now.
    func currentStream() throws -> ServerStream {
        try SoundServer.current(stream.index, of: "trayplayer")
    }
}
