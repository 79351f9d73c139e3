import AudioPolicy
import ControlProtocol
import Foundation
import PulseBackend
import SoundBackend
import TestRequirements
import Testing

// The daemon's behaviour on real components: the built `audio-policyd` binary, a real sound server
// (PulseAudio, or PipeWire with pipewire-pulse: scripts/test runs this suite against both), real
// players (paplay, aplay through ALSA's pulse plugin), and what the sink actually played, recorded
// from its monitor and measured with sox.
//
//   eval "$(scripts/sound-server start pulseaudio /tmp/it-pa)"
//   AUDIO_POLICYD_BIN=$PWD/.build/debug/audio-policyd swift test --filter Daemon
//   scripts/sound-server stop /tmp/it-pa
//
// Without a sound server (no PULSE_SERVER) the suite reports itself skipped.
//
// Every test runs on its own in one shared server (`.serialized`); the tests are declared in
// extensions of this type, one file per theme (DaemonDuckTests, DaemonPauseTests, ...).

@Suite(
    "audio-policyd on a real sound server",
    .serialized,
    .needs(TestEnvironment.soundServerMissing)
)
final class DaemonTests {
    /// Server events and daemon log lines: what every wait wakes on.
    let changes = Changes()
    let events: ServerEvents
    private var players: [Player] = []
    private var daemons: [DaemonProcess] = []

    init() throws {
        events = try ServerEvents(changes: changes)
        // Recording from the first test on (its first bytes take up to 2 s on PulseAudio).
        _ = try Monitor.shared.get()
        try SoundServer.awaitQuiet(changes: changes)
    }

    deinit {
        // Daemons first (a clean stop restores what they changed), then the players.
        for daemon in daemons where daemon.isRunning { _ = daemon.terminate(timeout: 2) }
        daemons.removeAll()
        players.removeAll()
    }

    // MARK: - Starting things

    /// Starts the daemon (the embedded default policy unless `policy` is given) and waits until it is
    /// ready: answering, connected, every stream taken in.
    func startDaemon(policy: String? = nil) throws -> DaemonProcess {
        let daemon = try DaemonProcess(policy: policy, changes: changes)
        daemons.append(daemon)
        return daemon
    }

    /// Starts a player and waits for its stream.
    func play(_ tone: Tone, role: String?, name: String, program: Player.Program = .paplay) throws -> Player {
        let player = try Player(tone, role: role, name: name, program: program, changes: changes)
        players.append(player)
        try player.awaitStream()
        return player
    }

    /// Starts music (role `music`), unmuted, at an own volume with unequal channels (so that balance is
    /// checked too); returns the player and that volume as the server reports it. Set explicitly: the
    /// server restores whatever the last music stream was left at.
    func startMusic(name: String = "music-app", percent: [Double] = [85, 70]) throws -> (Player, Volume) {
        let music = try play(.music, role: "music", name: name)
        let volume = try music.setVolume(percent: percent)
        try music.unmute()
        return (music, volume)
    }

    // MARK: - Waiting for the server

    /// Waits until the server reports `player`'s stream in a state that satisfies `condition`.
    @discardableResult
    func awaitStream(_ player: Player, _ what: String, timeout: Double = 5,
                     _ condition: (ServerStream) throws -> Bool) throws -> ServerStream {
        try changes.await("\(player.name): \(what)", timeout: timeout) { () throws -> Probe<ServerStream> in
            let now = try player.stream()
            return try condition(now) ? .done(now) : .waiting("\(now)")
        }
    }

    /// Waits until the daemon's status satisfies `condition`.
    @discardableResult
    func awaitStatus(_ daemon: DaemonProcess, _ what: String, timeout: Double = 5,
                     _ condition: (StatusReport) throws -> Bool) throws -> StatusReport {
        try daemon.tellingItsLog {
            try changes.await(what, timeout: timeout) { () throws -> Probe<StatusReport> in
                let status = try daemon.status()
                return try condition(status) ? .done(status) : .waiting(Self.describe(status))
            }
        }
    }

    /// Waits until `daemon` reports `player`'s app as the Now Playing owner.
    func awaitNowPlaying(_ player: Player, _ daemon: DaemonProcess, timeout: Double = 5) throws {
        try awaitStatus(daemon, "\(player.name) (pid \(player.pid)) to own Now Playing", timeout: timeout) {
            $0.nowPlaying?.pid == Int(player.pid)
        }
    }

    // MARK: - Sound

    /// Records the sink for `seconds` and returns the recording.
    func record(seconds: Double = 0.5) throws -> Recording {
        try Levels.record(seconds: seconds)
    }

    // MARK: - Volumes

    /// The volume the daemon writes for `own` under a policy factor of `decibels` (the daemon's own
    /// scaling, `pa_sw_volume_multiply`): where a finished ramp lands.
    static func volume(_ own: Volume, at decibels: Double) -> Volume {
        Volume(raw: ChannelVolumes(values: own.raw).scaled(by: Level(decibels: decibels).linear).values)
    }

    /// Whether `volume` is `expected` to one raw unit per channel (pipewire-pulse rounds through floats).
    static func matches(_ volume: Volume, _ expected: Volume) -> Bool {
        ChannelVolumes(values: volume.raw).matches(ChannelVolumes(values: expected.raw))
    }

    static func describe(_ status: StatusReport) -> String {
        let rows = status.streams.map {
            "\($0.index.map { "#\($0)" } ?? $0.hook ?? "?") \($0.application) class=\($0.class) state=\($0.state.rawValue)"
                + " factor=\(String(format: "%.3f", $0.factor))\($0.muted ? " muted" : "")"
        }
        return "now playing: \(status.nowPlaying.map { "\($0.application) pid \($0.pid ?? 0)" } ?? "nobody"); "
            + rows.joined(separator: "; ")
    }
}
