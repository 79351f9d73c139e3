/// Whether a stream is heard, judged from its peaks (``PeakMeter``), with
/// hysteresis so that speech and music do not flap between audible and
/// silent. Pure: time is an input, in ``MainLoop/monotonicMicroseconds()``
/// microseconds.
///
/// - A stream starts **audible**: it counts as playing until measured otherwise.
/// - It is audible again as soon as one peak is above ``Settings/audibleAbove``.
/// - It turns **silent** once every peak for ``Settings/hangover`` has been
///   below ``Settings/silentBelow``: on the first quiet peak that arrives a
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
///     if let change = audibility.add(peak: peak, at: MainLoop.monotonicMicroseconds()) { … }
/// }
/// ```
public struct AudibilityDetector: Equatable, Sendable {
    public enum Transition: Equatable, Sendable {
        case becameAudible
        case becameSilent
    }

    public struct Settings: Equatable, Sendable {
        /// A peak above this (linear, 1 = 0 dBFS) is sound: −50 dBFS (0.00316). Quiet passages of
        /// music and soft speech peak well above it; what stays below is noise floors and fade tails.
        public var audibleAbove: Float
        /// Peaks below this are silence: −60 dBFS (0.001). Digital silence reads 0, dithered 16-bit
        /// silence about −90 dBFS, a quiet room recorded by a microphone about −60 to −70. The 10 dB
        /// between the two thresholds keep a level hovering around one of them from flapping.
        public var silentBelow: Float
        /// How long (µs) every peak must stay below ``silentBelow`` before the stream is silent:
        /// 400 ms, longer than the pauses between words and between notes (mostly under 300 ms), short
        /// enough that a stream that stopped sounding is reported within half a second. At the meter's
        /// 6 peaks a second, that is two or three quiet peaks after the last sound.
        public var hangover: UInt64

        public init(audibleAbove: Float = 0.00316, silentBelow: Float = 0.001, hangover: UInt64 = 400_000) {
            self.audibleAbove = audibleAbove
            self.silentBelow = silentBelow
            self.hangover = hangover
        }
    }

    public let settings: Settings
    /// The current judgement.
    public private(set) var isAudible = true
    /// The last time a peak at or above ``Settings/silentBelow`` arrived while audible (or the start).
    public private(set) var lastSoundAt: UInt64

    /// A stream that started (or was first seen) at `startedAt`: audible.
    public init(startedAt: UInt64, settings: Settings = Settings()) {
        self.settings = settings
        self.lastSoundAt = startedAt
    }

    /// When the stream turns silent if only quiet peaks arrive from now on; `nil` while silent.
    public var silentAt: UInt64? { isAudible ? lastSoundAt &+ settings.hangover : nil }

    /// Takes one peak (linear) measured at `time`; returns the transition it causes, if any.
    /// A NaN peak is no evidence and is ignored.
    public mutating func add(peak: Float, at time: UInt64) -> Transition? {
        guard !peak.isNaN else { return nil }
        if peak > settings.audibleAbove {
            lastSoundAt = max(lastSoundAt, time)
            guard !isAudible else { return nil }
            isAudible = true
            return .becameAudible
        }
        guard isAudible else { return nil }
        if peak >= settings.silentBelow {
            lastSoundAt = max(lastSoundAt, time)
            return nil
        }
        guard time >= lastSoundAt, time - lastSoundAt >= settings.hangover else { return nil }
        isAudible = false
        return .becameSilent
    }
}
