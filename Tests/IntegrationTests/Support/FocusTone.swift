import AudioPolicy
import Foundation
import Testing

/// An app of the focus tests: a real mpv playing a tone as the policy's game (`focusgame`, ambient by
/// FocusDesktop.gamePolicy's rule), its stream, and its own volume once read. Each mpv is its own app
/// (the engine groups streams by process), so two of them are a game and another app.
final class FocusTone {
    let label: String
    let child: Child
    let stream: ServerStream
    private(set) var own: Volume?

    /// Starts mpv on a tone of `frequency` Hz with `options` (a window, an app id), its stream named
    /// `name`, awaits the stream and sets it to full volume. Start it before the daemon.
    init(_ label: String, frequency: Int, name: String = "focusgame", options: [String] = [],
         environment: [String: String]? = nil, changes: Changes) throws {
        self.label = label
        child = try Child(["mpv", "--no-config", "--audio-client-name=\(name)", "--loop=inf"] + options
                          + ["av://lavfi:sine=frequency=\(frequency)"], environment: environment ?? TestEnvironment.variables)
        let started = try SoundServer.awaitStream(of: child, pid: child.pid, name: name, changes: changes, timeout: 10)
        // Full volume, as a user would have it: the server restores the app name's last volume, which an
        // earlier test's daemon (killed, so never restoring) may have left ducked, far under the tones' levels.
        try SoundServer.setVolume(started.index, raw: started.volume.raw.map { _ in 65536 })
        stream = try changes.await("\(label)'s stream at full volume", timeout: 5) { () throws -> Probe<ServerStream> in
            let now = try SoundServer.current(started.index, of: label)
            return now.volume.raw.allSatisfy { $0 == 65536 } ? .done(now) : .waiting("\(now)")
        }
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

    /// Stops the daemon cleanly (SIGTERM) and awaits every app back at its own volume on the server: what
    /// focus ducked is put back, and no ducked volume is left for the server to save for the next test.
    static func stopRestores(_ apps: [FocusTone], daemon: DaemonProcess, changes: Changes) throws {
        #expect(daemon.terminate() == 0, "the daemon's exit on SIGTERM")
        for app in apps {
            guard let own = app.own else { throw CommandFailure(description: "\(app.label): own volume not read") }
            try FocusDesktop.awaitVolume(app.stream.index, "\(app.label) back at its own volume after a clean stop",
                                         changes: changes) { DaemonTests.matches($0.volume, own) && !$0.muted }
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
