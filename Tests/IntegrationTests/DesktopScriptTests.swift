import AudioPolicy
import ControlProtocol
import Foundation
import Testing
import TestRequirements

/// What the project ships for KDE Plasma and GNOME on Wayland (desktop/), apart from their shells: the
/// GNOME Shell extension's socket client run under plain gjs against the real daemon, and every script
/// parsed — the Plasma 6 branch and the GNOME 45+ module included, which no test runs in their shells.
/// In the shells themselves: KWinFocusTests, GnomeShellFocusTests.
@Suite("desktop scripts", .serialized)
final class DesktopScriptTests {
    let changes = Changes()
    static let desktop = TestEnvironment.packageRoot.appendingPathComponent("desktop")
    static let extensionFolder = desktop.appendingPathComponent("gnome-shell/audio-policyd-focus@audio-policyd")

    @Test("the GNOME extension's FocusTeller (gjs) reaches the daemon: focus on one app's pid ducks the other",
          .needs(!SessionBus.installed("gjs") || !SessionBus.installed("mpv") ? "needs gjs and mpv (apt-get install gjs mpv)" : nil))
    func gnomeTellerDucksTheOtherApp() throws {
        let scene = try FocusScene(policy: "policies/focus.toml", changes: changes)
        let (game, other, daemon) = (scene.game, scene.other, scene.daemon)
        // One gjs run tells two focus changes over one connection, as the extension does.
        try tell([(other.pid, "org.example.Other"), (game.pid, "")], socket: daemon.socketPath)
        try FocusTone.await([(other, true), (game, false)], "the other app ducked, the focused game not",
                            daemon: daemon, changes: changes)
        try tell([(0, "")], socket: daemon.socketPath)
        try FocusTone.await([(game, true), (other, true)], "no window focused: both ducked", daemon: daemon, changes: changes)
        try tell([(game.pid, "")], socket: daemon.socketPath)
        try FocusTone.await([(game, false), (other, true)], "the game back exactly", daemon: daemon, changes: changes)
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
        try FocusTone.stopRestores([game, other], daemon: daemon, changes: changes)
    }

    @Test("control: with no daemon listening, tell says so and does not throw",
          .needs(!SessionBus.installed("gjs") ? "needs gjs (apt-get install gjs)" : nil))
    func gnomeTellerWithoutDaemon() throws {
        let output = try gjs(["const t = new FocusTeller('/nonexistent/control'); print(t.tell(42, 'x'));"])
        #expect(output == "false", "\(output)")
    }

    @Test("the extension's control socket path is the daemon's default, with and without XDG_RUNTIME_DIR",
          .needs(!SessionBus.installed("gjs") ? "needs gjs (apt-get install gjs)" : nil))
    func gnomeSocketPath() throws {
        for runtime in ["/run/user/4242", nil] {
            var environment = TestEnvironment.variables
            environment["XDG_RUNTIME_DIR"] = runtime
            let printed = try gjs(["print(controlSocketPath());"], environment: environment)
            #expect(printed == ControlSocketPath.default(environment: environment), "XDG_RUNTIME_DIR=\(runtime ?? "unset")")
        }
    }

    @Test("every shipped script parses (node --check), every metadata is JSON naming its own folder",
          .needs(!SessionBus.installed("node") ? "needs node (apt-get install nodejs)" : nil))
    func scriptsParse() throws {
        let kwin = Self.desktop.appendingPathComponent("kwin/audio-policyd-focus")
        let legacy = Self.desktop.appendingPathComponent("gnome-shell/gnome-43-44/audio-policyd-focus@audio-policyd")
        let scripts = [kwin.appendingPathComponent("contents/code/main.js"), legacy.appendingPathComponent("extension.js"),
                       Self.extensionFolder.appendingPathComponent("extension.js"),
                       Self.extensionFolder.appendingPathComponent("focusTeller.js")]
        let folder = try TestEnvironment.temporaryFolder("audio-policyd-scripts")
        defer { try? FileManager.default.removeItem(at: folder) }
        for script in scripts {
            // The GNOME 45 files are ES modules: node reads .mjs as one.
            let module = try String(contentsOf: script, encoding: .utf8).contains("\nimport ")
            let checked = module ? folder.appendingPathComponent(script.deletingPathExtension().lastPathComponent + ".mjs") : script
            if module { try FileManager.default.copyItem(at: script, to: checked) }
            let result = try outcome(["node", "--check", checked.path])
            #expect(result.code == 0, "\(script.path): \(result.errors)")
        }
        let kwinMetadata = try json(kwin.appendingPathComponent("metadata.json"))
        let plugin = try #require(kwinMetadata["KPlugin"] as? [String: Any])
        #expect(plugin["Id"] as? String == "audio-policyd-focus")
        #expect(kwinMetadata["KPackageStructure"] as? String == "KWin/Script")
        let main = try #require(kwinMetadata["X-Plasma-MainScript"] as? String)
        #expect(FileManager.default.fileExists(atPath: kwin.appendingPathComponent("contents/\(main)").path))
        for (folder, versions) in [(Self.extensionFolder, ["45", "46", "47", "48"]), (legacy, ["43", "44"])] {
            let metadata = try json(folder.appendingPathComponent("metadata.json"))
            #expect(metadata["uuid"] as? String == folder.lastPathComponent)
            #expect(metadata["shell-version"] as? [String] == versions)
        }
    }

    /// Runs `lines` under `gjs -m` with FocusTeller and controlSocketPath imported; returns what it printed.
    private func gjs(_ lines: [String], environment: [String: String]? = nil) throws -> String {
        let folder = try TestEnvironment.temporaryFolder("audio-policyd-gjs")
        defer { try? FileManager.default.removeItem(at: folder) }
        let driver = folder.appendingPathComponent("driver.js")
        let teller = Self.extensionFolder.appendingPathComponent("focusTeller.js").absoluteString
        try (["import {FocusTeller, controlSocketPath} from '\(teller)';"] + lines).joined(separator: "\n")
            .write(to: driver, atomically: true, encoding: .utf8)
        let result = try outcome(["gjs", "-m", driver.path], environment: environment)
        guard result.code == 0 else { throw CommandFailure(description: "gjs: \(result)") }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Tells the daemon each (pid, app) in turn through one FocusTeller, as the extension would, then
    /// half-closes and runs the main loop until the teller has read every reply and the daemon's end
    /// (a client that closes before reading its replies loses the requests after the first it missed).
    private func tell(_ focus: [(Int32, String)], socket: String) throws {
        let calls = focus.map { "if (!t.tell(\($0.0), '\($0.1)')) throw new Error('daemon not reached');" }
        _ = try gjs(["import GLib from 'gi://GLib';", "const t = new FocusTeller('\(socket)');"] + calls + [
            "const loop = new GLib.MainLoop(null, false);",
            "const close = t.close.bind(t);",
            "t.close = () => { close(); loop.quit(); };",
            "t._connection.get_socket().shutdown(false, true);",
            "GLib.timeout_add_seconds(GLib.PRIORITY_DEFAULT, 5, () => { throw new Error('no end of replies in 5 s'); });",
            "loop.run();",
        ])
    }

    private func json(_ file: URL) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
    }
}
