import AudioPolicy
import Foundation
import Testing
import TestRequirements

/// Focus on a real X11 display: Xvfb and openbox (which keeps `_NET_ACTIVE_WINDOW`), two real mpv
/// windows — a "game" playing a tone, classified ambient by a rule, and a second, silent one — and the
/// daemon with `DISPLAY` set. Activating the other window ducks the game to policies/focus.toml's -12 dB;
/// activating the game's restores it exactly. The control: the default policy changes nothing.
@Suite("focus on X11", .serialized, .needs(FocusDesktop.missing))
final class FocusTests {
    let changes = Changes()

    @Test("a game whose window loses focus is ducked to -12 dB (policies/focus.toml), and restored exactly when its window has focus again")
    func unfocusedGameDucks() throws {
        try playFocus(policy: FocusDesktop.gamePolicy(from: "policies/focus.toml"), ducks: true)
    }

    @Test("control: the default policy (unfocused = nothing) leaves the game alone whatever has focus")
    func defaultPolicyChangesNothing() throws {
        try playFocus(policy: FocusDesktop.gamePolicy(from: "policies/default.toml"), ducks: false)
    }

    @Test("control: in a Wayland session (WAYLAND_DISPLAY set) DISPLAY is Xwayland's and not followed: focus moves, the game plays on")
    func xwaylandDisplayIsNotFollowed() throws {
        try playFocus(policy: FocusDesktop.gamePolicy(from: "policies/focus.toml"), ducks: false, wayland: true)
    }

    private func playFocus(policy: URL, ducks: Bool, wayland: Bool = false) throws {
        defer { try? FileManager.default.removeItem(at: policy.deletingLastPathComponent()) }
        let (xvfb, display) = try FocusDesktop.startXvfb(changes: changes)
        defer { xvfb.stop() }
        var environment = TestEnvironment.variables
        environment["DISPLAY"] = display
        let openbox = try Child(["openbox"], environment: environment)
        defer { openbox.kill() }
        let daemon = try DaemonProcess(policy: policy.path, changes: changes,
                                       environment: ["DISPLAY": display, "WAYLAND_DISPLAY": wayland ? "wayland-test" : ""])
        _ = try daemon.awaitLog(wayland ? "focus: DISPLAY \(display) is Xwayland's" : "focus: following the active window on X display \(display)")
        let game = try Child(["mpv", "--force-window=yes", "--vo=x11", "--audio-client-name=focusgame", "--loop=inf",
                              "--no-config", "av://lavfi:sine=frequency=440"], environment: environment)
        defer { game.kill() }
        let other = try Child(["mpv", "--force-window=yes", "--vo=x11", "--no-audio", "--idle=yes", "--no-config"],
                              environment: environment)
        defer { other.kill() }
        let gameWindow = try window(of: game.pid, environment)
        let otherWindow = try window(of: other.pid, environment)
        let stream = try changes.await("the game's stream", timeout: 10) { () -> Probe<ServerStream> in
            try SoundServer.streams().first { $0.properties["application.name"] == "focusgame" }
                .map { .done($0) } ?? .waiting("none yet")
        }
        try activate(gameWindow, environment)
        // The other window opened last and had focus: the game may be on its way back from a duck.
        let own = try FocusDesktop.ownVolume(of: stream.index, daemon: daemon, changes: changes)
        try activate(otherWindow, environment)
        let expected = ducks ? DaemonTests.volume(own, at: -12) : own
        if ducks {
            try awaitVolume(stream.index, "ducked to \(expected)") { DaemonTests.matches($0.volume, expected) }
        } else {
            try changes.watch(for: 2) {
                let now = try #require(try SoundServer.stream(stream.index))
                #expect(DaemonTests.matches(now.volume, own), "the default policy changed the game: \(now)")
            }
        }
        try activate(gameWindow, environment)
        try awaitVolume(stream.index, "back at exactly \(own)") { DaemonTests.matches($0.volume, own) && !$0.muted }
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    private func window(of pid: Int32, _ environment: [String: String]) throws -> String {
        try changes.await("a window of pid \(pid)", timeout: 10) { () -> Probe<String> in
            let found = try outcome(["xdotool", "search", "--pid", "\(pid)"], environment: environment)
            return found.output.split(separator: "\n").first.map { .done(String($0)) } ?? .waiting("none yet")
        }
    }

    private func activate(_ window: String, _ environment: [String: String]) throws {
        let result = try outcome(["xdotool", "windowactivate", "--sync", window], environment: environment)
        guard result.code == 0 else { throw CommandFailure(description: "xdotool windowactivate \(window): \(result)") }
    }

    private func awaitVolume(_ index: UInt32, _ what: String, _ condition: (ServerStream) -> Bool) throws {
        try FocusDesktop.awaitVolume(index, "the game's stream: \(what)", changes: changes, condition)
    }
}

/// What the focus test needs of the machine, and its game rule.
enum FocusDesktop {
    /// Why the test cannot run here, or nil.
    static let missing: String? = {
        let tools = ["Xvfb", "openbox", "xdotool", "mpv"]
        let absent = tools.filter { tool in
            !["/usr/bin", "/usr/local/bin", "/bin"].contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") }
        }
        return absent.isEmpty ? nil : "needs \(absent.joined(separator: ", ")) (apt-get install xvfb openbox xdotool mpv)"
    }()

    /// The app's own volume on stream `index`: what the server shows once the daemon has the stream
    /// untouched (factor 1, playing) and the volume holds still (a restore ramp may still be running).
    static func ownVolume(of index: UInt32, daemon: DaemonProcess, changes: Changes) throws -> Volume {
        try changes.await("the daemon to have stream #\(index) untouched", timeout: 5) { () throws -> Probe<Void> in
            let status = try daemon.status()
            let row = status.streams.first { $0.index == index }
            return row.map { $0.factor == 1 && $0.state == .playing } == true ? .done(()) : .waiting(DaemonTests.describe(status))
        }
        var last: ServerStream?
        return try awaitVolume(index, "stream #\(index): its own volume, steady", changes: changes) { now in
            defer { last = now }
            return last.map { DaemonTests.matches($0.volume, now.volume) } ?? false
        }.volume
    }

    /// Awaits stream `index` on the server meeting `condition` (within 5 s); throws if it is gone.
    @discardableResult
    static func awaitVolume(_ index: UInt32, _ what: String, changes: Changes,
                            _ condition: (ServerStream) -> Bool) throws -> ServerStream {
        try changes.await(what, timeout: 5) { () throws -> Probe<ServerStream> in
            guard let now = try SoundServer.stream(index) else { throw CommandFailure(description: "stream #\(index) is gone") }
            return condition(now) ? .done(now) : .waiting("\(now)")
        }
    }

    /// Starts an Xvfb on a display number it picks itself (`-displayfd`: it skips the ones in use and
    /// takes over a lock whose process is gone); returns it once it accepts clients, with its `:N`.
    ///
    /// Stopped with SIGTERM (`Child.stop`, with signals at their defaults) it removes its lock and socket.
    /// A SIGKILLed Xvfb leaves `/tmp/.XN-lock` behind; when this test chose its own number among 90..<200
    /// and took any lock as taken, 110 of them left by earlier runs on one machine failed it.
    static func startXvfb(changes: Changes) throws -> (Child, String) {
        let output = Pipe()
        let xvfb = try Child(["Xvfb", "-displayfd", "1", "-nolisten", "tcp"], standardOutput: output, defaultSignals: true)
        let lines = LineLog(reading: output, changes: changes)
        let number = try changes.await("Xvfb's display number", timeout: 10) { () throws -> Probe<String> in
            guard xvfb.isRunning else { throw CommandFailure(description: "Xvfb exited with \(xvfb.exitCode ?? -1)") }
            return lines.lines().first.map { .done($0.trimmingCharacters(in: .whitespaces)) } ?? .waiting("nothing written yet")
        }
        return (xvfb, ":\(number)")
    }

    /// The policy at `path` (in the package; a whole policy or a drop-in) with a first rule that makes the tones' mpv (`focusgame`,
    /// `focusradio`) ambient games (mpv has a media player's name, so the default rules would make it media).
    static func gamePolicy(from path: String) throws -> URL {
        let folder = try TestEnvironment.temporaryFolder("audio-policyd-focus")
        let text = try String(contentsOf: TestEnvironment.packageRoot.appendingPathComponent(path), encoding: .utf8)
        let marker = "[[rule]]\nname = \"infrastructure\""
        let rule = "[[rule]]\nname = \"focus test game\"\nmatch = { app = [\"focusgame\", \"focusradio\"] }\nclass = \"ambient\"\n\n"
        let file = folder.appendingPathComponent("policy.toml")
        if text.contains("\n[drop-in]") {
            // A drop-in (policies/focus.toml): its rules are tried before the default's under it.
            try (text + "\n" + rule).write(to: file, atomically: true, encoding: .utf8)
            return file
        }
        guard let at = text.range(of: marker) else { throw CommandFailure(description: "no infrastructure rule in \(path)") }
        try (text[..<at.lowerBound] + rule + text[at.lowerBound...]).write(to: file, atomically: true, encoding: .utf8)
        return file
    }
}
