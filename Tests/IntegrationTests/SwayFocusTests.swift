import AudioPolicy
import Foundation
import Testing
import TestRequirements

/// Focus under a real sway: sway 1.7 headless (pixman renderer, no input devices) as an unprivileged
/// user — it refuses to run as root — with a runtime folder of its own; two real mpv windows on it
/// (Wayland, `--vo=wlshm`, app ids `swaygame` and `swayother`), each playing a tone as the policy's
/// ambient game, and a third app whose window and sound are two processes (named by the window's app
/// id); the daemon with `SWAYSOCK` set. `swaymsg '[app_id=…] focus'` moves focus: the apps whose
/// windows lost it are ducked to policies/focus.toml's -12 dB, the focused one is not (each is the
/// others' control); an empty workspace ducks all; sway going away restores exactly.
@Suite("focus under sway", .serialized, .needs(HeadlessSway.missing))
final class SwayFocusTests {
    let changes = Changes()

    @Test("the app whose window loses focus is ducked to -12 dB, the focused one is not; an empty workspace ducks all; sway gone restores")
    func unfocusedAppDucks() throws {
        let policy = try FocusDesktop.gamePolicy(from: "policies/focus.toml")
        defer { try? FileManager.default.removeItem(at: policy.deletingLastPathComponent()) }
        let sway = try HeadlessSway(changes: changes)
        // The radio: its window (app id focusradio) is a silent mpv, its sound another mpv with no window,
        // named focusradio (as Chromium's window and its audio service): the window names the app by its
        // app id. Its sound outlives sway, so it shows what sway going away does.
        let radioWindow = try Child(["mpv", "--no-config", "--no-audio", "--idle=yes"] + sway.windowOptions(appID: "focusradio"),
                                    environment: sway.clientEnvironment)
        defer { radioWindow.kill() }
        try sway.awaitWindow("focusradio", pid: radioWindow.pid)
        let radio = try FocusTone("the radio", frequency: 550, name: "focusradio", changes: changes)
        let (game, other) = try openWindows(on: sway)
        let daemon = try DaemonProcess(policy: policy.path, changes: changes,
                                       environment: ["SWAYSOCK": sway.socket, "DISPLAY": ""])
        _ = try daemon.awaitLog("focus: following the focused window through the sway/i3 socket \(sway.socket)")
        // The other window opened last and has focus; no other app was seen with focus: nobody is unfocused.
        for app in [game, other, radio] { try app.readOwnVolume(daemon: daemon, changes: changes) }
        // What the sink plays, for the game's 440 Hz and the other app's 660 Hz (the radio plays 550 Hz).
        let (gameBand, otherBand) = (400...480, 620...700)
        let before = try Levels.record(seconds: 0.5)

        try sway.command("[app_id=swaygame] focus")
        try FocusTone.await([(other, true), (game, false), (radio, false)], "the other app ducked, the focused game not",
                            daemon: daemon, changes: changes)
        try sway.command("[app_id=swayother] focus")
        try FocusTone.await([(game, true), (other, false), (radio, false)], "the game ducked, the other app back exactly",
                            daemon: daemon, changes: changes)
        let after = try Levels.record(seconds: 0.5)
        let gameDrop = try after.level(gameBand) - before.level(gameBand)
        let otherDrop = try after.level(otherBand) - before.level(otherBand)
        #expect(abs(gameDrop + 12) < 1.5, "the sink plays the unfocused game \(gameDrop) dB from before")
        #expect(abs(otherDrop) < 1.5, "the sink plays the focused app \(otherDrop) dB from before (control)")
        print("sway focus: on the sink, the unfocused game \(String(format: "%.2f", gameDrop)) dB, the focused app \(String(format: "%+.2f", otherDrop)) dB")
        try sway.command("[app_id=focusradio] focus")
        try FocusTone.await([(game, true), (other, true), (radio, false)], "the radio's window focused: the others ducked",
                            daemon: daemon, changes: changes)
        try sway.command("workspace 2")
        try FocusTone.await([(game, true), (other, true), (radio, true)], "an empty workspace: all ducked",
                            daemon: daemon, changes: changes)
        try sway.command("workspace 1")
        try FocusTone.await([(game, true), (other, true), (radio, false)], "back on workspace 1: the radio's window has focus again",
                            daemon: daemon, changes: changes)
        try sway.command("[app_id=swayother] focus")
        try FocusTone.await([(game, true), (other, false), (radio, true)], "the other app focused: the radio ducked",
                            daemon: daemon, changes: changes)
        // sway's Wayland clients (the game, the other app) go with it; the radio's sound plays on.
        sway.stop()
        _ = try daemon.awaitLog("focus: sway/i3 went away; focus is unknown from now on")
        try FocusTone.await([(radio, false)], "sway gone: focus unknown, the radio back exactly", daemon: daemon, changes: changes)
        let problems = daemon.problems.filter { !$0.contains("sway/i3 went away") }
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test("control: the default policy (unfocused = nothing) leaves both alone wherever sway moves focus")
    func defaultPolicyChangesNothing() throws {
        let policy = try FocusDesktop.gamePolicy(from: "policies/default.toml")
        defer { try? FileManager.default.removeItem(at: policy.deletingLastPathComponent()) }
        let sway = try HeadlessSway(changes: changes)
        let (game, other) = try openWindows(on: sway)
        let daemon = try DaemonProcess(policy: policy.path, changes: changes,
                                       environment: ["SWAYSOCK": sway.socket, "DISPLAY": ""])
        _ = try daemon.awaitLog("focus: following the focused window through the sway/i3 socket \(sway.socket)")
        try game.readOwnVolume(daemon: daemon, changes: changes)
        try other.readOwnVolume(daemon: daemon, changes: changes)
        for command in ["[app_id=swaygame] focus", "[app_id=swayother] focus", "workspace 2"] {
            try sway.command(command)
        }
        try FocusTone.hold([(game, false), (other, false)], for: 2, daemon: daemon, changes: changes)
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    /// The game's window, then the other's (which so has focus), each awaited in sway's tree.
    private func openWindows(on sway: HeadlessSway) throws -> (game: FocusTone, other: FocusTone) {
        let game = try FocusTone("the game", frequency: 440, options: sway.windowOptions(appID: "swaygame"),
                                 environment: sway.clientEnvironment, changes: changes)
        try sway.awaitWindow("swaygame", pid: game.pid)
        let other = try FocusTone("the other app", frequency: 660, options: sway.windowOptions(appID: "swayother"),
                                  environment: sway.clientEnvironment, changes: changes)
        try sway.awaitWindow("swayother", pid: other.pid, focused: true)
        return (game, other)
    }
}

/// sway headless for a test: as the unprivileged user `AUDIO_POLICYD_SWAY_USER` (default
/// `audio-policyd-sway`, which scripts/test creates) when the tests run as root, as ourselves
/// otherwise; its runtime folder (sockets) and config in a private folder. `deinit` stops it.
final class HeadlessSway {
    /// Why the test cannot run here, or nil.
    static let missing: String? = {
        let absent = ["sway", "swaymsg", "mpv", "setpriv"].filter { !SessionBus.installed($0) }
        if !absent.isEmpty { return "needs \(absent.joined(separator: ", ")) (apt-get install sway mpv util-linux)" }
        if getuid() == 0, getpwnam(user) == nil {
            return "sway refuses to run as root and there is no user \(user) to run it as: "
                + "useradd --system \(user) (scripts/test does)"
        }
        return nil
    }()

    static let user = TestEnvironment.variables["AUDIO_POLICYD_SWAY_USER"] ?? "audio-policyd-sway"

    let runtime: URL
    /// The IPC socket (`SWAYSOCK`).
    let socket: String
    /// The Wayland socket, as a path (`WAYLAND_DISPLAY` may be one).
    let wayland: String
    private let child: Child
    private let changes: Changes

    init(changes: Changes) throws {
        self.changes = changes
        runtime = try TestEnvironment.temporaryFolder("audio-policyd-sway")
        let config = runtime.appendingPathComponent("config")
        try "output HEADLESS-1 resolution 800x600\n".write(to: config, atomically: true, encoding: .utf8)
        var prefix: [String] = []
        if getuid() == 0, let account = getpwnam(Self.user) {
            let (uid, gid) = (account.pointee.pw_uid, account.pointee.pw_gid)
            guard chown(runtime.path, uid, gid) == 0, chown(config.path, uid, gid) == 0 else {
                throw CommandFailure(description: "chown \(runtime.path): \(String(cString: strerror(errno)))")
            }
            // setpriv execs sway, so the child's pid is sway's and stopping it stops sway.
            prefix = ["setpriv", "--reuid=\(uid)", "--regid=\(gid)", "--clear-groups"]
        }
        let environment = [
            "PATH": TestEnvironment.variables["PATH"] ?? "/usr/bin:/bin", "HOME": runtime.path,
            "XDG_RUNTIME_DIR": runtime.path, "WLR_BACKENDS": "headless", "WLR_LIBINPUT_NO_DEVICES": "1",
            "WLR_RENDERER": "pixman",
        ]
        let sway = try Child(prefix + ["sway", "-c", config.path], environment: environment, defaultSignals: true)
        child = sway
        let runtimePath = runtime.path
        (socket, wayland) = try changes.await("sway's IPC and Wayland sockets in \(runtimePath)", timeout: 10) {
            () throws -> Probe<(String, String)> in
            if let code = sway.exitCode { throw CommandFailure(description: "sway exited with \(code)") }
            let names = (try? FileManager.default.contentsOfDirectory(atPath: runtimePath)) ?? []
            guard let ipc = names.first(where: { $0.hasPrefix("sway-ipc.") && $0.hasSuffix(".sock") }),
                  let display = names.first(where: { $0.hasPrefix("wayland-") && !$0.hasSuffix(".lock") }),
                  (try? outcome(["swaymsg", "-s", "\(runtimePath)/\(ipc)", "-t", "get_version"]).code) == 0
            else { return .waiting("\(names)") }
            return .done(("\(runtimePath)/\(ipc)", "\(runtimePath)/\(display)"))
        }
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: runtime)
    }

    func stop() {
        child.stop()
    }

    /// A Wayland client's environment: ours, on this sway, with no X display to fall back on.
    var clientEnvironment: [String: String] {
        var environment = TestEnvironment.variables
        environment["WAYLAND_DISPLAY"] = wayland
        environment["DISPLAY"] = nil
        return environment
    }

    /// mpv options for a real Wayland window with `appID` (shared-memory output: no GPU here).
    func windowOptions(appID: String) -> [String] {
        ["--force-window=yes", "--vo=wlshm", "--wayland-app-id=\(appID)"]
    }

    /// Runs a sway command (`swaymsg`); throws unless sway says it succeeded.
    func command(_ command: String) throws {
        let result = try outcome(["swaymsg", "-s", socket, command])
        guard result.code == 0, !result.output.contains("\"success\": false") else { throw CommandFailure(description: "swaymsg \(command): \(result)") }
    }

    /// Awaits a window of `pid` with `appID` in sway's tree (and with focus, if asked).
    func awaitWindow(_ appID: String, pid: Int32, focused: Bool = false) throws {
        try changes.await("sway's window \(appID) (pid \(pid))\(focused ? " with focus" : "")", timeout: 10) {
            () throws -> Probe<Void> in
            let tree = try outcome(["swaymsg", "-s", socket, "-t", "get_tree", "-r"]).output
            let json = try JSONSerialization.jsonObject(with: Data(tree.utf8))
            let found = Self.windows(in: json).contains {
                $0["app_id"] as? String == appID && $0["pid"] as? Int == Int(pid) && (!focused || $0["focused"] as? Bool == true)
            }
            return found ? .done(()) : .waiting(String(tree.prefix(200)))
        }
    }

    private static func windows(in node: Any) -> [[String: Any]] {
        guard let node = node as? [String: Any] else { return [] }
        let children = ((node["nodes"] as? [Any]) ?? []) + ((node["floating_nodes"] as? [Any]) ?? [])
        return (node["pid"] != nil ? [node] : []) + children.flatMap { windows(in: $0) }
    }
}
