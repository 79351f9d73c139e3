/// When a stream's sound counts as heard and when as silent: the policy's `[audibility]` table.
///
/// Policy rather than code because what is quiet depends on the desktop: a dictation app's room noise,
/// a podcast's soft passages or a far end's comfort noise can sit near the defaults, and a user whose
/// music stays ducked through such a stream (or is released too soon under it) changes these instead of
/// the daemon. Used by every meter (``AudibilityDetector``), on a sound server and on ALSA alike.
public struct AudibilityThresholds: Hashable, Sendable {
    /// A peak above this is sound: −50 dBFS. Quiet passages of music and soft speech peak well above it;
    /// what stays below is noise floors and fade tails.
    public var heardAbove: Level
    /// Peaks below this are silence: −60 dBFS. Digital silence reads 0, dithered 16-bit silence about
    /// −90 dBFS, a quiet room recorded by a microphone about −60 to −70. The gap between the two keeps a
    /// level hovering around one of them from flapping.
    public var silentBelow: Level
    /// How long every peak must stay below ``silentBelow`` before the stream is silent, ms: 400, longer
    /// than the pauses between words and between notes (mostly under 300 ms), short enough that a stream
    /// that stopped sounding is reported within half a second. At a meter's 6 peaks a second, that is
    /// two or three quiet peaks after the last sound.
    public var silenceAfter: Milliseconds

    /// The lowest threshold a policy may set, dBFS: below it is dither and converter noise.
    public static let lowestDecibels = -100.0
    /// The longest `silence-after` a policy may set, ms: ALSA's stall feed covers the first verdict's
    /// wait and this much more (``PeakFeed`` in the ALSA backend).
    public static let longestSilenceAfter: Milliseconds = 2000

    public init(heardAbove: Level = Level(decibels: -50), silentBelow: Level = Level(decibels: -60),
                silenceAfter: Milliseconds = 400) {
        self.heardAbove = heardAbove
        self.silentBelow = silentBelow
        self.silenceAfter = silenceAfter
    }
}
