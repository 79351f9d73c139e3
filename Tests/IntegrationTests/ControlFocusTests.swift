import AudioPolicy
import Foundation
import Testing

/// The control socket's `focus` op, as a desktop's script sends it (the KWin script through D-Bus, the
/// GNOME Shell extension directly): two real mpv tones, both the policy's ambient game, and the daemon
/// with policies/focus.toml. Focus on one ducks the other to -12 dB and leaves the focused one alone;
/// focus moving back swaps them; no window focused (`focus` with neither pid nor app) ducks both.
@Suite("focus through the control socket", .serialized,
       .disabled(if: !SessionBus.installed("mpv"), "needs mpv (apt-get install mpv)"))
final class ControlFocusTests {
    let changes = Changes()

    @Test("focus on one app's pid ducks the other app, never the focused one; no focus ducks both")
    func focusOpDucksTheOtherApp() throws {
        let policy = try FocusDesktop.gamePolicy(from: "policies/focus.toml")
        defer { try? FileManager.default.removeItem(at: policy.deletingLastPathComponent()) }
        let game = try FocusTone("the game", frequency: 440, changes: changes)
        let other = try FocusTone("the other app", frequency: 660, changes: changes)
        let daemon = try DaemonProcess(policy: policy.path, changes: changes)
        try game.readOwnVolume(daemon: daemon, changes: changes)
        try other.readOwnVolume(daemon: daemon, changes: changes)

        // Control: focus on the other app, the game never seen with a window — nobody is unfocused.
        try focus(#"{"id":1,"op":"focus","pid":\#(other.pid)}"#, daemon)
        try FocusTone.hold([(game, false), (other, false)], for: 1, daemon: daemon, changes: changes)
        try focus(#"{"id":2,"op":"focus","pid":\#(game.pid)}"#, daemon)
        try FocusTone.await([(other, true), (game, false)], "the other app ducked, the focused game not",
                            daemon: daemon, changes: changes)
        try focus(#"{"id":3,"op":"focus","pid":\#(other.pid),"app":"mpv"}"#, daemon)
        try FocusTone.await([(game, true), (other, false)], "the game ducked, the other app back exactly",
                            daemon: daemon, changes: changes)
        try focus(#"{"id":4,"op":"focus"}"#, daemon)
        try FocusTone.await([(game, true), (other, true)], "no window focused: both ducked", daemon: daemon, changes: changes)
        try focus(#"{"id":5,"op":"focus","pid":\#(game.pid)}"#, daemon)
        try FocusTone.await([(game, false), (other, true)], "the game back exactly", daemon: daemon, changes: changes)
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    @Test("control: the default policy (unfocused = nothing) leaves both alone whatever the focus op says")
    func defaultPolicyIgnoresFocus() throws {
        let policy = try FocusDesktop.gamePolicy(from: "policies/default.toml")
        defer { try? FileManager.default.removeItem(at: policy.deletingLastPathComponent()) }
        let game = try FocusTone("the game", frequency: 440, changes: changes)
        let other = try FocusTone("the other app", frequency: 660, changes: changes)
        let daemon = try DaemonProcess(policy: policy.path, changes: changes)
        try game.readOwnVolume(daemon: daemon, changes: changes)
        try other.readOwnVolume(daemon: daemon, changes: changes)
        for (id, pid) in [(1, other.pid), (2, game.pid)] {
            try focus(#"{"id":\#(id),"op":"focus","pid":\#(pid)}"#, daemon)
        }
        try focus(#"{"id":3,"op":"focus"}"#, daemon)
        try FocusTone.hold([(game, false), (other, false)], for: 2, daemon: daemon, changes: changes)
    }

    /// Sends one `focus` request and checks the daemon took it.
    private func focus(_ line: String, _ daemon: DaemonProcess) throws {
        let reply = try daemon.request(line)
        #expect(reply.contains(#""ok":true"#), "\(line) → \(reply)")
    }
}
