import Foundation

/// The scene the focus tests without a desktop of their own start from: the game's tone (440 Hz) and
/// the other app's (660 Hz), both the game policy's apps (``FocusDesktop/gamePolicy(from:)``), under a
/// daemon running that policy, each tone's own volume read once the daemon has it untouched.
final class FocusScene {
    let game: FocusTone
    let other: FocusTone
    let daemon: DaemonProcess
    private let policyFolder: URL

    /// `ready` runs once the daemon has started, before the tones' volumes are read (to await a line
    /// of its log, say).
    init(policy file: String, changes: Changes, ready: (DaemonProcess) throws -> Void = { _ in }) throws {
        let policy = try FocusDesktop.gamePolicy(from: file)
        policyFolder = policy.deletingLastPathComponent()
        do {
            game = try FocusTone("the game", frequency: 440, changes: changes)
            other = try FocusTone("the other app", frequency: 660, changes: changes)
            daemon = try DaemonProcess(policy: policy.path, changes: changes)
            try ready(daemon)
            try game.readOwnVolume(daemon: daemon, changes: changes)
            try other.readOwnVolume(daemon: daemon, changes: changes)
        } catch {
            try? FileManager.default.removeItem(at: policyFolder)
            throw error
        }
    }

    deinit {
        try? FileManager.default.removeItem(at: policyFolder)
    }
}
