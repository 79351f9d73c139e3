import AudioPolicy
import EventLoop
import SoundBackend

/// Feeds one ALSA stream's PEAK reports to its ``FedMeter``, and tells a stalled stream's silence.
///
/// The meter gets `peak_out`, the peak after the plugin's gain: PulseAudio's per-stream monitor, which
/// the daemon measures with on a sound server, carries the stream after its volume too, so a ducked or
/// faded stream reads the same on both backends. A stream that stops writing (paused, or drained
/// without a prepare, which an extplug cannot see) sends no more PEAKs; a sound server would go on
/// mixing it as silence. So once what the stream wrote has been heard (an app may write far ahead: mpv
/// over a JACK slave writes a whole 4 s file at once into a 43 s buffer, and reports then stop for
/// 4 s) and ``stallIntervals`` metering intervals more have passed with no report, the feed hands the
/// meter a silent peak per interval, for as long as it takes the daemon to call a stream silent
/// (``stallCoverage``), then stops: a timer that runs only while a silence is due.
final class PeakFeed {
    /// The metering interval asked of the plugin (ms): about the six peaks a second a PulseAudio meter
    /// gives, two or three within the audibility detector's 400 ms hangover.
    static let interval: UInt32 = 150
    /// Intervals without a report after which the stream counts as stalled.
    static let stallIntervals: UInt64 = 3
    /// How long (µs) silent peaks are handed in once stalled: the daemon's first-silence wait (1.5 s)
    /// and the longest hangover a policy may set (`[audibility] silence-after`, 2 s), and a peak more.
    static let stallCoverage: UInt64 = 1_500_000 + UInt64(AudibilityThresholds.longestSilenceAfter) * 1000
        + UInt64(interval) * 1000

    let meter: FedMeter
    private var timer: MainLoop.Timer?
    private var stalledSince: UInt64?

    /// Feeds `meter`; the stall timer starts now (a stream metered but already stalled counts too).
    init(meter: FedMeter, loop: MainLoop) {
        self.meter = meter
        timer = MainLoop.Timer(loop: loop) { [unowned self] in self.stallTick() }
        armForStall()
    }

    deinit {
        timer?.cancel()
    }

    /// A PEAK report arrived; what the stream wrote so far is heard until `heardUntil` (monotonic µs),
    /// if known.
    func report(_ peak: PluginMessage.Peak, heardUntil: UInt64?) {
        stalledSince = nil
        meter.deliver(peak.peakOut)
        armForStall(after: heardUntil)
    }

    /// The stream stopped running (not corked any more matters to the engine, not to the meter): no
    /// silence is due.
    func pause() {
        stalledSince = nil
        timer?.cancel()
    }

    /// The stream runs again: a stall is watched for.
    func resume() {
        armForStall()
    }

    private var intervalMicroseconds: UInt64 { UInt64(Self.interval) * 1000 }

    private func armForStall(after heardUntil: UInt64? = nil) {
        let from = max(MainLoop.monotonicMicroseconds(), heardUntil ?? 0)
        timer?.schedule(at: from + Self.stallIntervals * intervalMicroseconds)
    }

    private func stallTick() {
        let now = MainLoop.monotonicMicroseconds()
        let since = stalledSince ?? now
        stalledSince = since
        meter.deliver(0)
        if now &- since < Self.stallCoverage { timer?.schedule(after: intervalMicroseconds) }
    }
}
