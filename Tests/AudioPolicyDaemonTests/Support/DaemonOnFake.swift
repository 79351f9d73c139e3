import AudioPolicy
@testable import AudioPolicyDaemon
import EventLoop
import Foundation
import PulseBackend
import SoundBackend

/// A daemon on its own loop, connected to a ``FakeSoundServer`` (or to what `makeServer` makes: the ALSA
/// backend), with its journal and control socket in `directory`. No signals are caught and no session bus is used (without one, players are not paused).
/// The test drives the loop with ``run(until:timeout:)``: the daemon's ramps step on real timers.
final class DaemonOnFake {
    let loop = MainLoop()
    let daemon: Daemon
    let journalPath: String
    private(set) var isReady = false

    convenience init(server: FakeSoundServer, directory: URL, name: String = "daemon") throws {
        try self.init(makeServer: server.daemonConnections(), directory: directory, name: name)
    }

    init(makeServer: @escaping (MainLoop) -> any StreamServer, directory: URL, name: String = "daemon") throws {
        journalPath = directory.appendingPathComponent("journal").path
        var options = DaemonOptions(policy: .embeddedDefault, policyPath: nil,
                                    socketPath: directory.appendingPathComponent("\(name).socket").path, verbose: false)
        options.journalPath = journalPath
        options.raisePriority = false
        daemon = Daemon(options: options, loop: loop, server: makeServer)
        // FAKE_DEBUG=1 prints the daemon's debug log, to follow a failing test's decisions.
        daemon.logLevel = ProcessInfo.processInfo.environment["FAKE_DEBUG"] != nil ? .debug : .warning
        daemon.onReady = { [unowned self] in self.isReady = true }
        try daemon.start(handlingSignals: false)
        // Off the session bus even when the environment names one (scripts/test runs a private bus for the
        // MPRIS tests, whose daemons must get the Now Playing name), and no retry.
        daemon.players.leaveBus()
    }

    deinit {
        daemon.control?.shutdown()
    }

    /// Iterates the loop until `condition` holds; false if it did not within `timeout` seconds.
    @discardableResult
    func run(until condition: () -> Bool, timeout: Double = 10) -> Bool {
        loop.iterate(until: condition, timeout: timeout)
    }

    /// Iterates the loop for `seconds`, whatever happens.
    func run(for seconds: Double) {
        let start = Date()
        run(until: { Date().timeIntervalSince(start) >= seconds }, timeout: seconds)
    }

    /// The daemon's journal on disk, as the next start would read it.
    var journal: [JournalEntry] { Self.journal(at: journalPath) }

    static func journal(at path: String) -> [JournalEntry] {
        switch JournalStore(path: path).load(setAside: false) {
        case .empty, .corrupt: []
        case let .entries(entries), let .cutShort(entries): entries
        }
    }

}

extension MainLoop {
    /// Iterates the loop until `condition` holds; false if it did not within `timeout` seconds.
    @discardableResult
    func iterate(until condition: () -> Bool, timeout: Double = 10) -> Bool {
        let expired = Flag()
        let deadline = MainLoop.Timer(loop: self) { expired.isSet = true }
        deadline.schedule(after: UInt64(timeout * 1_000_000))
        defer { deadline.cancel() }
        while !condition() {
            if expired.isSet { return false }
            iterate(blocking: true)
        }
        return true
    }

    private final class Flag {
        var isSet = false
    }
}

/// A fresh directory for one test's journal and socket, removed with it.
final class ScratchDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("fake-server-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

extension ChannelVolumes {
    /// Each channel's level relative to `reference`'s, in dB.
    func decibels(from reference: ChannelVolumes) -> [Double] {
        zip(linearValues, reference.linearValues).map { 20 * log10($0 / $1) }
    }

    /// Whether every channel is `offset` dB from `reference`'s, within `tolerance`.
    func isOffset(by offset: Double, from reference: ChannelVolumes, tolerance: Double = 0.5) -> Bool {
        channels == reference.channels && decibels(from: reference).allSatisfy { abs($0 - offset) <= tolerance }
    }
}
