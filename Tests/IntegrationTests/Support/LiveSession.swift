import AudioPolicy
import AudioPolicyDaemon
import ControlProtocol
import Foundation

/// What a suite on the real sound server holds for one test: the server's events, the players and
/// daemons it started (stopped when the test ends, daemons first), and waits on the server's state.
/// The service and recovery suites use it; DaemonTests has the same helpers of its own.
final class LiveSession {
    let changes = Changes()
    private(set) var events: ServerEvents
    private var players: [Player] = []
    private var daemons: [DaemonProcess] = []

    init() throws {
        events = try ServerEvents(changes: changes)
        try SoundServer.awaitQuiet(changes: changes)
    }

    deinit {
        stopAll()
    }

    /// Stops the daemons (each restoring what it changed, so writing its journal), then the players.
    /// Call it before removing folders the daemons write to, or a daemon's last write recreates them.
    func stopAll() {
        for daemon in daemons where daemon.isRunning { _ = daemon.terminate(timeout: 2) }
        daemons.removeAll()
        players.removeAll()
    }

    /// Listens to the server again (after it was restarted: the old `pactl subscribe` ended with it).
    func resubscribe() throws {
        events = try ServerEvents(changes: changes)
    }

    // MARK: - Starting things

    func startDaemon(policy: String? = nil, stateHome: URL? = nil, runtime: URL? = nil,
                     environment: [String: String] = [:]) throws -> DaemonProcess {
        let daemon = try DaemonProcess(policy: policy, changes: changes, stateHome: stateHome, runtime: runtime,
                                       environment: environment)
        daemons.append(daemon)
        return daemon
    }

    func play(_ tone: Tone, role: String?, name: String) throws -> Player {
        let player = try Player(tone, role: role, name: name, changes: changes)
        players.append(player)
        try player.awaitStream()
        return player
    }

    /// Music (role `music`) at an own volume with unequal channels, unmuted; returns it and that volume.
    func startMusic(name: String = "music-app", percent: [Double] = [85, 70]) throws -> (Player, Volume) {
        let music = try play(.music, role: "music", name: name)
        let volume = try music.setVolume(percent: percent)
        try music.unmute()
        return (music, volume)
    }

    // MARK: - Waiting

    @discardableResult
    func awaitStream(_ player: Player, _ what: String, timeout: Double = 5,
                     _ condition: (ServerStream) throws -> Bool) throws -> ServerStream {
        try changes.await("\(player.name): \(what)", timeout: timeout) { () throws -> Probe<ServerStream> in
            let now = try player.stream()
            return try condition(now) ? .done(now) : .waiting("\(now)")
        }
    }

    @discardableResult
    func awaitStatus(_ daemon: DaemonProcess, _ what: String, timeout: Double = 5,
                     _ condition: (StatusReport) throws -> Bool) throws -> StatusReport {
        try daemon.tellingItsLog {
            try changes.await(what, timeout: timeout) { () throws -> Probe<StatusReport> in
                let status = try daemon.status()
                return try condition(status) ? .done(status) : .waiting(DaemonTests.describe(status))
            }
        }
    }

    /// Waits until `interruption` has acted on `player`'s stream (ducked to its level, or muted).
    func awaitInterrupted(_ player: Player, own: Volume, by interruption: Interruption, timeout: Double = 5) throws {
        switch interruption {
        case .duck:
            let landed = DaemonTests.volume(own, at: -20)
            try awaitStream(player, "ducked to \(landed)", timeout: timeout) { DaemonTests.matches($0.volume, landed) }
        case .mute:
            try awaitStream(player, "muted by the call", timeout: timeout) { $0.muted }
        }
    }

    /// Waits until `player`'s stream is back at exactly `own` (±1 raw unit on PipeWire) and unmuted.
    func awaitRestored(_ player: Player, to own: Volume, timeout: Double = 5) throws {
        try awaitStream(player, "restored to \(own), unmuted", timeout: timeout) {
            DaemonTests.matches($0.volume, own) && !$0.muted
        }
    }

    // MARK: - Files

    /// Waits until `path` exists (or, with `exists: false`, is gone): the daemon writes it on the loop.
    func awaitFile(_ path: String, exists: Bool = true, timeout: Double = 5) throws {
        try changes.await("\(path) to \(exists ? "exist" : "be gone")", timeout: timeout) { () -> Probe<Void> in
            FileManager.default.fileExists(atPath: path) == exists ? .done(()) : .waiting("not yet")
        }
    }
}

extension LiveSession {
    /// Waits until the journal at `path` holds nothing to restore (no file, or an empty last record).
    func awaitJournalEmpty(_ path: String, timeout: Double = 5) throws {
        try changes.await("the journal \(path) to be empty", timeout: timeout) { () -> Probe<Void> in
            JournalStore(path: path).load(setAside: false) == .empty ? .done(()) : .waiting("not yet")
        }
    }
}

/// The journal a daemon keeps in `folder`: its log in `XDG_RUNTIME_DIR`, its durable copy in
/// `XDG_STATE_HOME`.
func journalPath(in folder: URL) -> String {
    folder.appendingPathComponent("audio-policyd/journal.json").path
}
