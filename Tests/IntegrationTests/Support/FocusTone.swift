import AudioPolicy
import Foundation

/// An app of the focus tests: a real mpv playing a tone as the policy's game (`focusgame`, ambient by
/// FocusDesktop.gamePolicy's rule), its stream, and its own volume once read. Each mpv is its own app
/// (the engine groups streams by process), so two of them are a game and another app.
final class FocusTone {
    let label: String
    let child: Child
    let stream: ServerStream
    private(set) var own: Volume?

    /// Starts mpv on a tone of `frequency` Hz with `options` (a window, an app id), its stream named
    /// `name`, and awaits the stream.
    init(_ label: String, frequency: Int, name: String = "focusgame", options: [String] = [],
         environment: [String: String]? = nil, changes: Changes) throws {
        self.label = label
        child = try Child(["mpv", "--no-config", "--audio-client-name=\(name)", "--loop=inf"] + options
                          + ["av://lavfi:sine=frequency=\(frequency)"], environment: environment ?? TestEnvironment.variables)
        stream = try SoundServer.awaitStream(of: child, pid: child.pid, name: name, changes: changes, timeout: 10)
    }

    deinit { child.kill() }

    var pid: Int32 { child.pid }

    /// Reads its own volume (FocusDesktop.ownVolume): call while the daemon leaves it alone.
    func readOwnVolume(daemon: DaemonProcess, changes: Changes) throws {
        own = try FocusDesktop.ownVolume(of: stream.index, daemon: daemon, changes: changes)
    }

    /// Awaits each app at its own volume or ducked by `decibels`, on the server (to one raw unit) and in
    /// the daemon's status (its factor), all at once: one app's duck is the other's control.
    static func await(_ wanted: [(FocusTone, ducked: Bool)], decibels: Double = -12, _ what: String,
                      daemon: DaemonProcess, changes: Changes) throws {
        try changes.await(what, timeout: 5) { () throws -> Probe<Void> in
            try mismatch(wanted, decibels: decibels, daemon: daemon).map { .waiting($0) } ?? .done(())
        }
    }

    /// Watches for `seconds` that each app stays as `wanted` (a control: nothing may change).
    static func hold(_ wanted: [(FocusTone, ducked: Bool)], for seconds: Double, decibels: Double = -12,
                     daemon: DaemonProcess, changes: Changes) throws {
        try changes.watch(for: seconds) {
            if let wrong = try mismatch(wanted, decibels: decibels, daemon: daemon) {
                throw CommandFailure(description: "changed during the control: \(wrong)")
            }
        }
    }

    /// What is not as `wanted`, or nil.
    private static func mismatch(_ wanted: [(FocusTone, ducked: Bool)], decibels: Double,
                                 daemon: DaemonProcess) throws -> String? {
        let factor = Level(decibels: decibels).linear
        let status = try daemon.status()
        for (app, ducked) in wanted {
            guard let own = app.own else { throw CommandFailure(description: "\(app.label): own volume not read") }
            guard let now = try SoundServer.stream(app.stream.index) else {
                throw CommandFailure(description: "\(app.label)'s stream is gone")
            }
            let row = status.streams.first { $0.index == app.stream.index }
            let volumeOK = DaemonTests.matches(now.volume, ducked ? DaemonTests.volume(own, at: decibels) : own) && !now.muted
            let factorOK = row.map { abs($0.factor - (ducked ? factor : 1)) < 0.005 } ?? false
            if !volumeOK || !factorOK {
                return "\(app.label) \(ducked ? "ducked" : "at its own volume") — server: \(now); daemon: "
                    + DaemonTests.describe(status)
            }
        }
        return nil
    }
}
