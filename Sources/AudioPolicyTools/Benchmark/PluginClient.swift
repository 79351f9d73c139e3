import ALSABackend
import EventLoop
import FoundationEssentials
import FoundationGaps
import Glibc

/// One ALSA stream as the daemon sees it, spoken from the benchmark: a connection to the daemon's plugin
/// socket that says what the plugin inside an ALSA client says (HELLO, FORMAT, STATE), with the packets of
/// ``PluginMessage`` — so the benchmark times the daemon, not the bench's own code, and needs no card.
///
/// Why not the plugin itself: it runs inside an ALSA client on a paced device (JACK's dummy backend in
/// `Tests/ALSAPlugin`), whose period timing would blur a sub-millisecond figure; the plugin's own cost
/// is measured apart (`Tests/ALSAPlugin/bench.c`).
final class PluginClient {
    let fd: Int32

    /// Connects to `socketPath` and says HELLO for a playback stream of `binary`, opened on the PCM of
    /// `classHint` (as `pcm.audiopolicy_CLASS` does), naming the features the plugin has (so the daemon
    /// hands it each ramp whole), then its FORMAT: it is set up, not yet playing.
    init(socketPath: String, binary: String, classHint: String) throws {
        fd = try Self.connect(to: socketPath)
        let hello = PluginMessage.Hello(pid: UInt32(getpid()), direction: .playback, binary: binary,
                                        classHint: classHint, application: "", pcmName: "audiopolicy_\(classHint)",
                                        features: .ramp)
        try send(.hello(hello))
        try send(.format(PluginMessage.Format(rate: 48000, channels: 2, sampleFormat: .s16, bufferFrames: 4096,
                                              periodFrames: 1024)))
    }

    deinit { Glibc.close(fd) }

    /// A connected seqpacket socket to the daemon's plugin socket at `path`.
    static func connect(to path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemCallError.current("socket") }
        let address = try UnixSocketAddress(path: path)
        guard address.withSocketAddress({ Glibc.connect(fd, $0, $1) }) == 0 else {
            let error = SystemCallError.current("connect \(path)")
            Glibc.close(fd)
            throw error
        }
        return fd
    }

    func send(_ message: PluginMessage) throws {
        let bytes = message.encoded
        guard Glibc.send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else {
            throw SystemCallError.current("send")
        }
    }

    /// Says the stream is in `state` (a real plugin says so on prepare, start, drain and close).
    func say(_ state: PluginMessage.StreamState) throws {
        let now = MainLoop.monotonicMicroseconds()
        runningSince = state == .running ? (runningSince ?? now) : nil
        nextPeak = runningSince == nil ? nil : meterInterval.map { now + $0 }
        try send(.state(PluginMessage.State(state: state, muted: false, gain: 1, target: 1, position: 0)))
    }

    /// The next gain command (a RAMP, or a SET_GAIN) within `timeout` seconds, and when it arrived (monotonic µs); meanwhile the
    /// stream plays as ``play(for:)`` says. Nil when none came.
    func nextGain(within timeout: Double) -> (gain: Float, at: UInt64)? {
        serve(until: MainLoop.monotonicMicroseconds() + UInt64(timeout * 1_000_000), returningAtGain: true)
    }

    /// Plays for `seconds` as the plugin inside a playing client would be heard by the daemon: a PEAK
    /// of ``level`` (after the gain it was told) per metering interval the daemon asked for, none after
    /// METER off; STATE and a PEAK on QUERY. No other packet is sent, so the daemon's wake-ups are its own.
    func play(for seconds: Double) {
        _ = serve(until: MainLoop.monotonicMicroseconds() + UInt64(seconds * 1_000_000), returningAtGain: false)
    }

    /// The peak the stream's audio has before the gain (1 = full scale): a tone at half scale.
    var level: Float = 0.5
    /// The gain the daemon last set.
    private(set) var gain: Float = 1
    /// The PEAK interval the daemon asked for, µs; nil: none (METER off). Before any METER, the plugin's
    /// default reporting: two a second.
    private var meterInterval: UInt64? = 500_000
    private var nextPeak: UInt64?
    private var runningSince: UInt64?

    private func serve(until deadline: UInt64, returningAtGain: Bool) -> (gain: Float, at: UInt64)? {
        var buffer = [UInt8](repeating: 0, count: PluginMessage.largestSize)
        while true {
            let now = MainLoop.monotonicMicroseconds()
            if let due = nextPeak, due <= now {
                sendPeak()
                nextPeak = meterInterval.map { due + $0 }
                continue
            }
            guard now < deadline else { return nil }
            let wake = min(deadline, nextPeak ?? deadline)
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32((wake - now + 999) / 1000)) > 0 else { continue }
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { return nil }
            let arrived = MainLoop.monotonicMicroseconds()
            switch PluginMessage(decoding: buffer.prefix(count)) {
            case let .setGain(target, _), let .ramp(target, _, _):
                gain = target
                if returningAtGain { return (target, arrived) }
            case let .meter(interval):
                meterInterval = interval == PluginMessage.meterOff ? nil : UInt64(interval == 0 ? 500 : interval) * 1000
                nextPeak = runningSince == nil ? nil : meterInterval.map { arrived + $0 }
            case .query:
                try? send(.state(PluginMessage.State(state: runningSince == nil ? .prepared : .running, muted: false,
                                                     gain: gain, target: gain, position: position(at: arrived))))
                sendPeak()
            default:
                break
            }
        }
    }

    private func position(at time: UInt64) -> UInt64 {
        runningSince.map { (time - $0) * 48 / 1000 } ?? 0
    }

    private func sendPeak() {
        guard runningSince != nil else { return }
        let now = MainLoop.monotonicMicroseconds()
        try? send(.peak(PluginMessage.Peak(peakIn: level, peakOut: level * gain,
                                           frames: UInt32((meterInterval ?? 500_000) * 48 / 1000), position: position(at: now))))
    }
}
