import AudioPolicy

/// One stream's peak meter and what it has found: the peaks turned into audible and silent reports.
///
/// The engine asks for a stream to be measured only while its sound can change a decision
/// (``AudioPolicy/Command/measure(_:_:)``), so music playing alone has no meter and the daemon no
/// wake-ups; each meter wakes the loop about 6 times a second (a pulse meter records 6 peaks a second;
/// at most 10 with the server's own events). The first report of a meter says what it found, whichever
/// it is — the first loud peak, or a silence as long as the hangover — so the engine learns both "heard"
/// and "silent since it started"; after that only changes are reported. Kept in the stream's one record
/// in the shell, and closed with it.
package struct StreamMeasurement {
    /// A first verdict of silence needs this long (µs) of a running meter: a new stream's first peaks
    /// can be quiet before its sound reaches the sink (seen in CI: a prompt found silent, released, then
    /// audible again, so the music flapped). Later silences need only the detector's hangover.
    static let firstSilence: UInt64 = 1_500_000

    package let meter: any StreamMeter
    private var judge: AudibilityDetector
    /// Whether a first verdict was reported.
    package private(set) var reported = false
    private let startedAt: UInt64

    /// A meter started at `now` (µs, monotonic), judging by the policy's `[audibility]`.
    package init(_ meter: any StreamMeter, thresholds: AudibilityThresholds, at now: UInt64) {
        self.meter = meter
        judge = AudibilityDetector(startedAt: now, thresholds: thresholds)
        startedAt = now
    }

    /// The policy's `[audibility]` replaced (a reload): the running meter judges by the new one.
    package mutating func judge(by thresholds: AudibilityThresholds) {
        judge.thresholds = thresholds
    }

    /// One peak at `now`: whether the stream is to be reported audible (true) or silent (false), or nil.
    package mutating func heard(_ peak: Float, at now: UInt64) -> Bool? {
        var change = judge.add(peak: peak, at: now)
        if change == .becameSilent, !reported, now &- startedAt < Self.firstSilence {
            // Too early to call it silent: judge afresh from here.
            judge = AudibilityDetector(startedAt: now, thresholds: judge.thresholds)
            change = nil
        }
        var audible: Bool?
        switch change {
        case .becameAudible?: audible = true
        case .becameSilent?: audible = false
        case nil where !reported && judge.isSound(peak): audible = true
        case nil: break
        }
        if audible != nil { reported = true }
        return audible
    }
}
