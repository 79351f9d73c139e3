import AudioPolicy
import Foundation
import Testing

/// The GNOME Shell extension in a real GNOME Shell: gnome-shell 43 headless (`--headless --wayland
/// --no-x11`, a virtual monitor) on a private session bus, with the extension installed as `make
/// install` lays it out for 43/44 and enabled with `gnome-extensions enable`; two real mpv Wayland
/// windows playing tones as the policy's ambient game; the daemon with policies/focus.toml. A headless
/// shell has no input device and `org.gnome.Shell.Eval` needs unsafe mode, so a test-only extension
/// (Tests/Desktop/focus-driver@audio-policyd-tests) activates a window by pid, as a click would.
/// The shell's focus change reaches the daemon only through our extension: disabled, focus moves and
/// nothing changes (the control).
@Suite("focus under GNOME Shell", .serialized, .disabled(if: HeadlessGnomeShell.missing != nil, "\(HeadlessGnomeShell.missing ?? "")"))
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
        try shell.extensions("disable", HeadlessGnomeShell.extensionUUID)
        try shell.activate(game.pid)
        try FocusTone.hold([(game, true), (other, false)], for: 1.5, daemon: daemon, changes: changes)
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
        try FocusTone.stopRestores([game, other], daemon: daemon, changes: changes)
    }
}

/// gnome-shell headless on buses of its own, with our extension (the 43/44 one, as `make install` picks
/// for this shell) and the test's focus driver installed in a private HOME and enabled. `deinit`
/// stops the shell and its buses.
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

    let folder: URL
    let runtime: URL
    private var children: [Child] = []
    private let environment: [String: String]
    private let changes: Changes

    init(changes: Changes) throws {
        self.changes = changes
        folder = try TestEnvironment.temporaryFolder("audio-policyd-gnome")
        runtime = folder.appendingPathComponent("run")
        let home = folder.appendingPathComponent("home")
        let extensions = home.appendingPathComponent(".local/share/gnome-shell/extensions")
        for made in [runtime, extensions] {
            try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
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
        let session = "unix:path=\(runtime.path)/bus"
        let system = "unix:path=\(folder.path)/system-bus"
        environment = [
            "PATH": TestEnvironment.variables["PATH"] ?? "/usr/bin:/bin", "HOME": home.path, "XDG_RUNTIME_DIR": runtime.path,
            "DBUS_SESSION_BUS_ADDRESS": session,
            // The shell asks logind on the system bus when /run/systemd/seats exists: a bus of its own, with no logind.
            "DBUS_SYSTEM_BUS_ADDRESS": system,
        ]
        for address in [session, system] {
            children.append(try Child(["dbus-daemon", "--session", "--nofork", "--address=\(address)"], environment: environment))
        }
        let runtimePath = runtime.path, folderPath = folder.path
        try changes.await("the shell's buses", timeout: 10) { () -> Probe<Void> in
            FileManager.default.fileExists(atPath: "\(runtimePath)/bus") && FileManager.default.fileExists(atPath: "\(folderPath)/system-bus")
                ? .done(()) : .waiting("no sockets yet")
        }
        children.append(try Child(["gnome-shell", "--headless", "--wayland", "--no-x11", "--virtual-monitor", "1024x768"],
                                  environment: environment, defaultSignals: true))
        try changes.await("gnome-shell's Wayland socket and extension service", timeout: 20) { () throws -> Probe<Void> in
            if let code = children.last?.exitCode { throw CommandFailure(description: "gnome-shell exited with \(code)") }
            guard FileManager.default.fileExists(atPath: "\(runtimePath)/wayland-0") else { return .waiting("no wayland-0") }
            let listed = try outcome(["gnome-extensions", "list"], environment: environment)
            return listed.code == 0 && listed.output.contains(Self.driverUUID) ? .done(()) : .waiting("\(listed)")
        }
        for uuid in [Self.extensionUUID, Self.driverUUID] {
            try self.extensions("enable", uuid)
            try changes.await("\(uuid) enabled", timeout: 10) { () throws -> Probe<Void> in
                let info = try outcome(["gnome-extensions", "info", uuid], environment: environment).output
                return info.contains("State: ENABLED") ? .done(()) : .waiting(info)
            }
        }
    }

    deinit {
        for child in children.reversed() { child.stop() }
        // What the shell and its buses started (at-spi's bus, dconf-service, the shell's gjs services) may
        // outlive them: every process with this shell's private folder in its environment is ours to end.
        let marker = Array(folder.path.utf8)
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), pid != getpid(),
                  let environ = FileManager.default.contents(atPath: "/proc/\(entry)/environ"),
                  environ.split(separator: 0).contains(where: { $0.contains(marker) }) else { continue }
            kill(pid, SIGKILL)
        }
        try? FileManager.default.removeItem(at: folder)
    }

    /// A Wayland client's environment: ours, on this shell, with no X display to fall back on.
    var clientEnvironment: [String: String] {
        var client = TestEnvironment.variables
        client["WAYLAND_DISPLAY"] = runtime.appendingPathComponent("wayland-0").path
        client["DISPLAY"] = nil
        return client
    }

    /// `gnome-extensions VERB UUID` on this shell.
    func extensions(_ verb: String, _ uuid: String) throws {
        let result = try outcome(["gnome-extensions", verb, uuid], environment: environment)
        guard result.code == 0 else { throw CommandFailure(description: "gnome-extensions \(verb) \(uuid): \(result)") }
    }

    /// Puts the daemon's socket where the extension looks for it.
    func linkControlSocket(to path: String) throws {
        let folder = runtime.appendingPathComponent("audio-policyd")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("control").path, withDestinationPath: path)
    }

    /// Activates the window of `pid` through the focus driver, and awaits the shell having given it focus.
    func activate(_ pid: Int32) throws {
        let driver = ["gdbus", "call", "--session", "--dest", "org.audiopolicyd.tests.FocusDriver",
                      "--object-path", "/org/audiopolicyd/tests/FocusDriver", "--method"]
        try changes.await("the shell to focus pid \(pid)'s window", timeout: 10) { () throws -> Probe<Void> in
            let activated = try outcome(driver + ["org.audiopolicyd.tests.FocusDriver.Activate", "\(pid)"], environment: environment)
            guard activated.output.contains("true") else { return .waiting("no window of pid \(pid) yet: \(activated)") }
            let focused = try outcome(driver + ["org.audiopolicyd.tests.FocusDriver.Focused"], environment: environment)
            return focused.output.contains("(\(pid),)") ? .done(()) : .waiting("focused: \(focused.output)")
        }
    }
}
