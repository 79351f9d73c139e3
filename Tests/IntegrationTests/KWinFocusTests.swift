import AudioPolicy
import Foundation
import Testing
import TestRequirements

/// The KWin script in a real KWin: kwin_wayland 5.27 with its virtual backend in a private session
/// (DesktopSession), the script installed in the user's KWin scripts folder as `kpackagetool5 -i` puts
/// it and turned on in kwinrc, so KWin loads it as it starts; two real mpv Wayland windows playing tones
/// as the policy's ambient game; the daemon on the session's bus with policies/focus.toml. A script of
/// the test's own moves focus (`workspace.activeClient`), as a click would. The focus change reaches the
/// daemon only through our script (callDBus → org.audiopolicyd.Focus.Activated): unloaded, focus moves
/// and nothing changes (the control).
@Suite("focus under KWin", .serialized, .needs(HeadlessKWin.missing))
final class KWinFocusTests {
    let changes = Changes()

    @Test("the KWin script tells the daemon: the app whose window loses focus is ducked to -12 dB, the focused one is not; unloaded, it tells nothing")
    func scriptTellsFocus() throws {
        let policy = try FocusDesktop.gamePolicy(from: "policies/focus.toml")
        defer { try? FileManager.default.removeItem(at: policy.deletingLastPathComponent()) }
        let kwin = try HeadlessKWin(changes: changes)
        let windows = { (appID: String) in ["--force-window=yes", "--vo=wlshm", "--wayland-app-id=\(appID)"] }
        let game = try FocusTone("the game", frequency: 440, options: windows("kwingame"),
                                 environment: kwin.clientEnvironment, changes: changes)
        let other = try FocusTone("the other app", frequency: 660, options: windows("kwinother"),
                                  environment: kwin.clientEnvironment, changes: changes)
        let daemon = try DaemonProcess(policy: policy.path, changes: changes,
                                       environment: ["DBUS_SESSION_BUS_ADDRESS": kwin.session.sessionBus, "DISPLAY": ""])
        _ = try daemon.awaitLog("focus: desktop scripts can tell focus on the session bus as org.audiopolicyd.Focus")
        try game.readOwnVolume(daemon: daemon, changes: changes)
        try other.readOwnVolume(daemon: daemon, changes: changes)

        // The other window opened last and has focus (KWin gives a new window focus), before the daemon
        // ran: the game's focus is the first the daemon hears, and the other app was never seen focused.
        try kwin.activate(game.pid)
        try FocusTone.hold([(game, false), (other, false)], for: 1, daemon: daemon, changes: changes)
        try kwin.activate(other.pid)
        try FocusTone.await([(game, true), (other, false)], "the game ducked, the focused other app not",
                            daemon: daemon, changes: changes)
        try kwin.activate(game.pid)
        try FocusTone.await([(other, true), (game, false)], "the other app ducked, the game back exactly",
                            daemon: daemon, changes: changes)
        // Control: our script turned off as a user does (kwinrc, reconfigure): KWin still moves focus, and
        // nobody tells the daemon.
        try kwin.enableScript(false)
        try kwin.activate(other.pid)
        try FocusTone.hold([(other, true), (game, false)], for: 1.5, daemon: daemon, changes: changes)
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
        try FocusTone.stopRestores([game, other], daemon: daemon, changes: changes)
    }

    @Test("the KWin script tells the daemon the Now Playing tray player's last window closed: with closed-window = pause it is Paused, stays Now Playing, and the play key resumes it; unloaded, closing its window tells nothing and it plays on",
          .needs(TrayPlayer.missing))
    func scriptTellsLastWindowClosed() throws {
        let kwin = try HeadlessKWin(changes: changes)
        let daemon = try DaemonProcess(policy: ClosedWindow.policy, changes: changes,
                                       environment: ["DBUS_SESSION_BUS_ADDRESS": kwin.session.sessionBus, "DISPLAY": ""],
                                       arguments: ["--now-playing", "mpris"])
        _ = try daemon.awaitLog("focus: desktop scripts can tell focus on the session bus as org.audiopolicyd.Focus")
        // The tray player as a Wayland client of this KWin, its MPRIS player on the session's bus.
        var environment = kwin.clientEnvironment
        // GTK looks for the socket by name in XDG_RUNTIME_DIR.
        environment["WAYLAND_DISPLAY"] = HeadlessKWin.socket
        environment["XDG_RUNTIME_DIR"] = kwin.session.runtime.path
        environment["GDK_BACKEND"] = "wayland"
        environment["NO_AT_BRIDGE"] = "1"
        environment["DBUS_SESSION_BUS_ADDRESS"] = kwin.session.sessionBus

        // Control: our script turned off; KWin closes the window, nobody tells the daemon.
        try kwin.enableScript(false)
        do {
            let player = try TrayPlayer(environment: environment, changes: changes)
            try ClosedWindow.awaitNowPlaying(player, daemon, changes: changes)
            let mark = daemon.logCount
            try closeWindow(of: player, kwin)
            try ClosedWindow.expectPlaysOn(player, daemon, since: mark, told: false, changes: changes)
            #expect(!daemon.log[mark...].contains { $0.contains("last window closed") }, "told with the script off")
            try player.quit(changes: changes)
        }
        try kwin.enableScript(true)
        let player = try TrayPlayer(environment: environment, changes: changes)
        try ClosedWindow.awaitNowPlaying(player, daemon, changes: changes)
        let mark = daemon.logCount
        let closing = Date()
        try closeWindow(of: player, kwin)
        let took = try ClosedWindow.expectPausedThenResumed(player, daemon, since: mark, closing: closing, changes: changes)
        print(String(format: "[%@] closed-window under KWin: Paused and corked %.0f ms after closeWindow, %.1f dB paused",
                     TestEnvironment.serverKind, took.seconds * 1000, took.level))
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }
}

extension KWinFocusTests {
    /// Closes the tray player's window once KWin manages it: a script run before the window is in KWin's
    /// list closes nothing, so it runs again until the player says its window closed.
    func closeWindow(of player: TrayPlayer, _ kwin: HeadlessKWin) throws {
        try changes.await("KWin to close the tray player's window", timeout: 10) { () throws -> Probe<Void> in
            if player.lines.contains("window closed") { return .done(()) }
            try kwin.close(player.pid)
            return .waiting("\(player.lines)")
        }
    }
}

/// kwin_wayland on its virtual backend in a private session, with desktop/kwin/audio-policyd-focus
/// installed for the session's user and enabled in its kwinrc.
final class HeadlessKWin {
    static let scriptName = "audio-policyd-focus"
    static let socket = "wayland-kwin"

    /// Why the test cannot run here, or nil.
    static let missing: String? = {
        let absent = ["kwin_wayland", "dbus-send", "dbus-daemon", "mpv"].filter { !SessionBus.installed($0) }
        return absent.isEmpty ? nil : "needs \(absent.joined(separator: ", ")) (apt-get install kwin-wayland dbus mpv)"
    }()

    let session: DesktopSession
    private let changes: Changes
    private let kwinrc: URL
    private var drivers = 0

    init(changes: Changes) throws {
        self.changes = changes
        session = try DesktopSession("audio-policyd-kwin", changes: changes)
        let scripts = session.home.appendingPathComponent(".local/share/kwin/scripts")
        let config = session.home.appendingPathComponent(".config")
        for made in [scripts, config] { try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true) }
        try FileManager.default.copyItem(at: TestEnvironment.packageRoot.appendingPathComponent("desktop/kwin/\(Self.scriptName)"),
                                         to: scripts.appendingPathComponent(Self.scriptName))
        kwinrc = config.appendingPathComponent("kwinrc")
        try "[Plugins]\n\(Self.scriptName)Enabled=true\n".write(to: kwinrc, atomically: true, encoding: .utf8)
        // Debian gives kwin_wayland a file capability (cap_sys_resource) that a container may not grant, and
        // then refuses to exec it: a copy has none, and KWin runs as well without.
        let binary = session.folder.appendingPathComponent("kwin_wayland")
        let installed = ((TestEnvironment.variables["PATH"] ?? "/usr/bin").split(separator: ":").map { "\($0)/kwin_wayland" })
            .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/bin/kwin_wayland"
        try FileManager.default.copyItem(atPath: installed, toPath: binary.path)
        let kwin = try session.start([binary.path, "--virtual", "--no-lockscreen", "--socket", Self.socket,
                                      "--width", "1024", "--height", "768"], extra: ["KWIN_COMPOSE": "Q"])
        let runtimePath = session.runtime.path
        try changes.await("KWin's Wayland socket, with our script loaded", timeout: 20) { () throws -> Probe<Void> in
            if let code = kwin.exitCode { throw CommandFailure(description: "kwin_wayland exited with \(code)") }
            guard FileManager.default.fileExists(atPath: "\(runtimePath)/\(Self.socket)") else { return .waiting("no socket") }
            let loaded = try? self.scripting("isScriptLoaded", "string:\(Self.scriptName)")
            return loaded?.contains("boolean true") == true ? .done(()) : .waiting("script loaded: \(loaded ?? "no answer")")
        }
    }

    /// A Wayland client's environment: on this KWin.
    var clientEnvironment: [String: String] { session.clientEnvironment(wayland: Self.socket) }

    /// Calls `org.kde.kwin.Scripting.METHOD` on KWin's `/Scripting` (dbus-send argument syntax).
    @discardableResult
    func scripting(_ method: String, _ arguments: String...) throws -> String {
        try session.run(["dbus-send", "--session", "--print-reply", "--dest=org.kde.KWin", "/Scripting",
                         "org.kde.kwin.Scripting.\(method)"] + arguments)
    }

    /// Turns our script on or off as a user does: kwinrc's `[Plugins]`, then KWin's `reconfigure`; awaits
    /// KWin having (un)loaded it.
    func enableScript(_ enabled: Bool) throws {
        try "[Plugins]\n\(Self.scriptName)Enabled=\(enabled)\n".write(to: kwinrc, atomically: true, encoding: .utf8)
        try session.run(["dbus-send", "--session", "--print-reply", "--dest=org.kde.KWin", "/KWin", "org.kde.KWin.reconfigure"])
        try changes.await("KWin to \(enabled ? "load" : "unload") our script", timeout: 10) { () throws -> Probe<Void> in
            let loaded = try scripting("isScriptLoaded", "string:\(Self.scriptName)")
            return loaded.contains("boolean \(enabled)") ? .done(()) : .waiting(loaded)
        }
    }

    /// Activates the window of `pid` with a one-line KWin script of the test's own, as a click would.
    func activate(_ pid: Int32) throws {
        try drive("workspace.activeClient = c;", windowsOf: pid)
    }

    /// Closes the windows of `pid` as their close button would (`closeWindow`), with a script of the test's own.
    func close(_ pid: Int32) throws {
        try drive("c.closeWindow();", windowsOf: pid)
    }

    /// Runs `action` on every window `c` of `pid` in a one-line KWin script.
    private func drive(_ action: String, windowsOf pid: Int32) throws {
        drivers += 1
        let name = "focus-driver-\(drivers)"
        let file = session.folder.appendingPathComponent("\(name).js")
        try "workspace.clientList().forEach(function (c) { if (c.pid == \(pid)) \(action) });\n"
            .write(to: file, atomically: true, encoding: .utf8)
        try scripting("loadScript", "string:\(file.path)", "string:\(name)")
        try scripting("start")
    }
}
