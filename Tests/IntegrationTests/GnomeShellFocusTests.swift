import AudioPolicy
import Foundation
import Testing
import TestRequirements

/// The GNOME Shell extension in a real GNOME Shell: gnome-shell 43 headless (`--headless --wayland
/// --no-x11`, a virtual monitor) on a private session bus, with the extension installed as `make
/// install` lays it out for 43/44 and enabled with `gnome-extensions enable`; two real mpv Wayland
/// windows playing tones as the policy's ambient game; the daemon with policies/focus.toml. A headless
/// shell has no input device and `org.gnome.Shell.Eval` needs unsafe mode, so a test-only extension
/// (Tests/Desktop/focus-driver@audio-policyd-tests) activates a window by pid, as a click would.
/// The shell's focus change reaches the daemon only through our extension: disabled, focus moves and
/// nothing changes (the control).
@Suite("focus under GNOME Shell", .serialized, .needs(HeadlessGnomeShell.missing))
final class GnomeShellFocusTests {
    let changes = Changes()

    @Test("the extension tells the daemon: the app whose window loses focus is ducked to -12 dB, the focused one is not; disabled, it tells nothing")
    func extensionTellsFocus() throws {
        let policy = try FocusDesktop.gamePolicy(from: "policies/focus.toml")
        defer { try? FileManager.default.removeItem(at: policy.deletingLastPathComponent()) }
        let shell = try HeadlessGnomeShell(changes: changes)
        let windows = { (appID: String) in ["--force-window=yes", "--vo=wlshm", "--wayland-app-id=\(appID)"] }
        let game = try FocusTone("the game", frequency: 440, options: windows("gnomegame"),
                                 environment: shell.clientEnvironment, changes: changes)
        let other = try FocusTone("the other app", frequency: 660, options: windows("gnomeother"),
                                  environment: shell.clientEnvironment, changes: changes)
        let daemon = try DaemonProcess(policy: policy.path, changes: changes, environment: ["DISPLAY": ""])
        // The extension finds the daemon where it always is: $XDG_RUNTIME_DIR/audio-policyd/control.
        try shell.linkControlSocket(to: daemon.socketPath)
        try game.readOwnVolume(daemon: daemon, changes: changes)
        try other.readOwnVolume(daemon: daemon, changes: changes)

        try shell.activate(other.pid)
        try FocusTone.hold([(game, false), (other, false)], for: 1, daemon: daemon, changes: changes)
        try shell.activate(game.pid)
        try FocusTone.await([(other, true), (game, false)], "the other app ducked, the focused game not",
                            daemon: daemon, changes: changes)
        try shell.activate(other.pid)
        try FocusTone.await([(game, true), (other, false)], "the game ducked, the other app back exactly",
                            daemon: daemon, changes: changes)
        // Control: with the extension disabled the shell still moves focus, and nobody tells the daemon.
        // `gnome-extensions disable` only asks (a settings key): the shell disables it a moment later,
        // and a focus change before that still reached the daemon (the game began coming back in CI).
        try shell.extensions("disable", HeadlessGnomeShell.extensionUUID)
        try shell.awaitState(of: HeadlessGnomeShell.extensionUUID, enabled: false)
        try shell.activate(game.pid)
        try FocusTone.hold([(game, true), (other, false)], for: 1.5, daemon: daemon, changes: changes)
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
        try FocusTone.stopRestores([game, other], daemon: daemon, changes: changes)
    }

    @Test("the extension tells the daemon the Now Playing tray player's last window closed: with closed-window = pause it is Paused, stays Now Playing, and the play key resumes it; disabled, closing its window tells nothing and it plays on",
          .needs(TrayPlayer.missing))
    func extensionTellsLastWindowClosed() throws {
        let shell = try HeadlessGnomeShell(changes: changes)
        let daemon = try DaemonProcess(policy: ClosedWindow.policy, changes: changes, environment: ["DISPLAY": ""],
                                       arguments: ["--now-playing", "mpris"])
        try shell.linkControlSocket(to: daemon.socketPath)
        // The tray player as a Wayland client of this shell (GTK looks for the socket in XDG_RUNTIME_DIR).
        var environment = shell.clientEnvironment
        environment["WAYLAND_DISPLAY"] = "wayland-0"
        environment["XDG_RUNTIME_DIR"] = shell.session.runtime.path
        environment["GDK_BACKEND"] = "wayland"
        environment["NO_AT_BRIDGE"] = "1"

        // Control: our extension disabled; the shell closes the window, nobody tells the daemon.
        try shell.extensions("disable", HeadlessGnomeShell.extensionUUID)
        try shell.awaitState(of: HeadlessGnomeShell.extensionUUID, enabled: false)
        do {
            let player = try TrayPlayer(environment: environment, changes: changes)
            try ClosedWindow.awaitNowPlaying(player, daemon, changes: changes)
            let mark = daemon.logCount
            try shell.close(player.pid)
            try ClosedWindow.expectPlaysOn(player, daemon, since: mark, told: false, changes: changes)
            #expect(!daemon.log[mark...].contains { $0.contains("last window closed") }, "told with the extension off")
            try player.quit(changes: changes)
        }
        try shell.extensions("enable", HeadlessGnomeShell.extensionUUID)
        try shell.awaitState(of: HeadlessGnomeShell.extensionUUID, enabled: true)
        let player = try TrayPlayer(environment: environment, changes: changes)
        try ClosedWindow.awaitNowPlaying(player, daemon, changes: changes)
        let mark = daemon.logCount
        let closing = Date()
        try shell.close(player.pid)
        let took = try ClosedWindow.expectPausedThenResumed(player, daemon, since: mark, closing: closing, changes: changes)
        print(String(format: "[%@] closed-window under GNOME Shell: Paused and corked %.0f ms after the window's delete, %.1f dB paused",
                     TestEnvironment.serverKind, took.seconds * 1000, took.level))
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }
}

/// gnome-shell headless in a private session (DesktopSession), with our extension (the 43/44 one, as
/// `make install` picks for this shell) and the test's focus driver installed in its HOME and enabled.
final class HeadlessGnomeShell {
    static let extensionUUID = "audio-policyd-focus@audio-policyd"
    static let driverUUID = "focus-driver@audio-policyd-tests"

    /// The shell's major version, if it is installed.
    static let version: Int? = {
        guard let text = try? outcome(["gnome-shell", "--version"]).output,
              let number = text.split(separator: " ").last?.split(separator: ".").first else { return nil }
        return Int(number)
    }()

    /// Why the test cannot run here, or nil.
    static let missing: String? = {
        let absent = ["gnome-shell", "gnome-extensions", "gdbus", "dbus-daemon", "mpv"].filter { !SessionBus.installed($0) }
        if !absent.isEmpty { return "needs \(absent.joined(separator: ", ")) (apt-get install gnome-shell dbus mpv)" }
        guard let version, (43...44).contains(version) else {
            return "the test's focus driver is a GNOME Shell 43/44 extension; this is gnome-shell \(version.map(String.init) ?? "?")"
        }
        return nil
    }()

    let session: DesktopSession
    private let changes: Changes

    init(changes: Changes) throws {
        self.changes = changes
        // The shell asks logind on the system bus when /run/systemd/seats exists: a bus of its own, with no logind.
        session = try DesktopSession("audio-policyd-gnome", systemBus: true, changes: changes)
        let extensions = session.home.appendingPathComponent(".local/share/gnome-shell/extensions")
        let root = TestEnvironment.packageRoot
        let ours = extensions.appendingPathComponent(Self.extensionUUID)
        try FileManager.default.createDirectory(at: ours, withIntermediateDirectories: true)
        let legacy = root.appendingPathComponent("desktop/gnome-shell/gnome-43-44/\(Self.extensionUUID)")
        let modern = root.appendingPathComponent("desktop/gnome-shell/\(Self.extensionUUID)")
        for (source, file) in [(legacy, "metadata.json"), (legacy, "extension.js"), (modern, "focusTeller.js")] {
            try FileManager.default.copyItem(at: source.appendingPathComponent(file), to: ours.appendingPathComponent(file))
        }
        try FileManager.default.copyItem(at: root.appendingPathComponent("Tests/Desktop/\(Self.driverUUID)"),
                                         to: extensions.appendingPathComponent(Self.driverUUID))
        let shell = try session.start(["gnome-shell", "--headless", "--wayland", "--no-x11", "--virtual-monitor", "1024x768"])
        let (runtimePath, environment) = (session.runtime.path, session.environment)
        // The shell answers `gnome-extensions list` over the session bus once it has started; while it is
        // still starting, the call can hang (a CI run's clean clone: 10 s with no answer), which is only
        // waiting, as a call refused is: each try is given 5 s, the whole start 45 s.
        try changes.await("gnome-shell's Wayland socket and extension service", timeout: 45) { () throws -> Probe<Void> in
            if let code = shell.exitCode { throw CommandFailure(description: "gnome-shell exited with \(code)") }
            guard FileManager.default.fileExists(atPath: "\(runtimePath)/wayland-0") else { return .waiting("no wayland-0") }
            guard let listed = try? outcome(["gnome-extensions", "list"], environment: environment, timeout: 5) else {
                return .waiting("gnome-extensions list unanswered within 5 s")
            }
            return listed.code == 0 && listed.output.contains(Self.driverUUID) ? .done(()) : .waiting("\(listed)")
        }
        for uuid in [Self.extensionUUID, Self.driverUUID] {
            try self.extensions("enable", uuid)
            try awaitState(of: uuid, enabled: true)
        }
    }

    /// Waits until the shell reports extension `uuid` enabled, or no longer enabled: `gnome-extensions
    /// enable` and `disable` only set a key, which the shell acts on later.
    func awaitState(of uuid: String, enabled: Bool) throws {
        let environment = session.environment
        try changes.await("\(uuid) \(enabled ? "enabled" : "disabled")", timeout: 10) { () throws -> Probe<Void> in
            let info = try outcome(["gnome-extensions", "info", uuid], environment: environment).output
            return info.contains("State: ENABLED") == enabled ? .done(()) : .waiting(info)
        }
    }

    /// A Wayland client's environment: on this shell.
    var clientEnvironment: [String: String] { session.clientEnvironment(wayland: "wayland-0") }

    /// `gnome-extensions VERB UUID` on this shell.
    func extensions(_ verb: String, _ uuid: String) throws {
        try session.run(["gnome-extensions", verb, uuid])
    }

    /// Puts the daemon's socket where the extension looks for it.
    func linkControlSocket(to path: String) throws {
        let folder = session.runtime.appendingPathComponent("audio-policyd")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("control").path, withDestinationPath: path)
    }

    private static let driver = ["gdbus", "call", "--session", "--dest", "org.audiopolicyd.tests.FocusDriver",
                                 "--object-path", "/org/audiopolicyd/tests/FocusDriver", "--method"]

    /// Closes the windows of `pid` through the focus driver (as their close button would), once it has one.
    func close(_ pid: Int32) throws {
        try changes.await("the shell to close pid \(pid)'s window", timeout: 10) { () throws -> Probe<Void> in
            let closed = try session.run(Self.driver + ["org.audiopolicyd.tests.FocusDriver.Close", "\(pid)"])
            return closed.contains("true") ? .done(()) : .waiting("no window of pid \(pid) yet: \(closed)")
        }
    }

    /// Activates the window of `pid` through the focus driver, and awaits the shell having given it focus.
    func activate(_ pid: Int32) throws {
        let driver = Self.driver
        try changes.await("the shell to focus pid \(pid)'s window", timeout: 10) { () throws -> Probe<Void> in
            let activated = try session.run(driver + ["org.audiopolicyd.tests.FocusDriver.Activate", "\(pid)"])
            guard activated.contains("true") else { return .waiting("no window of pid \(pid) yet: \(activated)") }
            let focused = try session.run(driver + ["org.audiopolicyd.tests.FocusDriver.Focused"])
            return focused.contains("(\(pid),)") ? .done(()) : .waiting("focused: \(focused)")
        }
    }
}
