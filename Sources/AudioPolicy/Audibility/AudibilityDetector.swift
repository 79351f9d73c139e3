/// Whether a stream is heard, judged from its peaks (a meter's, on a sound
/// server or from our ALSA plugin), with hysteresis so that speech and
/// music do not flap between audible and silent. Pure: time is an input, in
/// monotonic microseconds; the thresholds are the policy's
/// (``AudibilityThresholds``).
///
/// - A stream starts **audible**: it counts as playing until measured otherwise.
/// - It is audible again as soon as one peak is above ``AudibilityThresholds/heardAbove``.
/// - It turns **silent** once every peak for ``AudibilityThresholds/silenceAfter`` has been
///   below ``AudibilityThresholds/silentBelow``: on the first quiet peak that arrives a
///   hangover or more after the last peak at or above that threshold (or
///   after the start).
/// - Peaks between the two thresholds keep an audible stream audible and do
///   not wake a silent one.
///
/// Judgement needs evidence: when no peaks arrive (the sink suspended, the
/// stream corked, the meter ended) the state stays as it was; ``silentAt``
/// tells a caller when a silence would be due, should it want a timer.
///
/// ```swift
/// var audibility = AudibilityDetector(startedAt: now)
/// meter.onPeak = { peak in
///     if let change = audibility.add(peak: peak, at: now) { … }
/// }
/// ```
public struct AudibilityDetector: Equatable, Sendable {
    public enum Transition: Equatable, Sendable {
        case becameAudible
        case becameSilent
    }

    /// The thresholds judged by, as the policy's `[audibility]` says; a reload replaces them and the
    /// judgement goes on from where it is.
    public var thresholds: AudibilityThresholds {
        didSet { setLimits() }
    }
    /// ``thresholds`` as the meter reports them: linear peaks and microseconds.
    private var audibleAbove: Float = 0
    private var silentBelow: Float = 0
    private var hangover: UInt64 = 0

    /// The current judgement.
    public private(set) var isAudible = true
    /// The last time a peak at or above ``AudibilityThresholds/silentBelow`` arrived while audible (or the start).
    public private(set) var lastSoundAt: UInt64

    /// A stream that started (or was first seen) at `startedAt`: audible.
    public init(startedAt: UInt64, thresholds: AudibilityThresholds = AudibilityThresholds()) {
        self.thresholds = thresholds
        self.lastSoundAt = startedAt
        setLimits()
    }

    private mutating func setLimits() {
        audibleAbove = Float(thresholds.heardAbove.linear)
        silentBelow = Float(thresholds.silentBelow.linear)
        hangover = UInt64(max(thresholds.silenceAfter, 0)) * 1000
    }

    /// Whether `peak` (linear) is sound by itself, whatever came before.
    public func isSound(_ peak: Float) -> Bool { peak > audibleAbove }

    /// When the stream turns silent if only quiet peaks arrive from now on; `nil` while silent.
    public var silentAt: UInt64? { isAudible ? lastSoundAt &+ hangover : nil }

    /// Takes one peak (linear) measured at `time`; returns the transition it causes, if any.
    /// A NaN peak is no evidence and is ignored.
    public mutating func add(peak: Float, at time: UInt64) -> Transition? {
        guard !peak.isNaN else { return nil }
        if peak > audibleAbove {
            lastSoundAt = max(lastSoundAt, time)
            guard !isAudible else { return nil }
            isAudible = true
            return .becameAudible
        }
        guard isAudible else { return nil }
        if peak >= silentBelow {
            lastSoundAt = max(lastSoundAt, time)
            return nil
        }
        guard time >= lastSoundAt, time - lastSoundAt >= hangover else { return nil }
        isAudible = false
        return .becameSilent
    }
}
