import AudioPolicy
import EventLoop

/// The peak meters of the streams the engine wants measured, turning their peaks into audible and
/// silent reports.
///
/// The engine asks for a stream to be measured only while its sound can change a decision
/// (``AudioPolicy/Command/measure(_:_:)``), so music playing alone has no meter and the daemon no
/// wake-ups; each meter wakes the loop about 6 times a second (a pulse meter records 6 peaks a second; at most 10 with the server's own events).
/// The first report of a meter says what it found, whichever it is — the first loud peak, or a silence
/// as long as the hangover — so the engine learns both "heard" and "silent since it started"; after
/// that only changes are reported.
package final class StreamMeters {
    private struct Entry {
        var meter: any StreamMeter
        var judge: AudibilityDetector
        var reported: Bool
        let startedAt: UInt64
    }

    /// A first verdict of silence needs this long (µs) of a running meter: a new stream's first peaks
    /// can be quiet before its sound reaches the sink (seen in CI: a prompt found silent, released, then
    /// audible again, so the music flapped). Later silences need only the detector's hangover.
    static let firstSilence: UInt64 = 1_500_000

    private var entries: [UInt32: Entry] = [:]
    /// The policy's `[audibility]`: new meters judge by it, and a reload hands it to the running ones.
    package var thresholds = AudibilityThresholds() {
        didSet {
            for index in entries.keys { entries[index]?.judge.thresholds = thresholds }
        }
    }
    /// Called with a sink input's index and whether it is audible, on the main loop.
    package var onAudibility: (UInt32, Bool) -> Void = { _, _ in }

    package init() {}

    /// How many streams are measured now.
    package var count: Int { entries.count }

    /// Starts measuring a sink input that plays to `sink` (a meter already running is kept); true when a
    /// new meter started, whose verdict will follow.
    @discardableResult
    package func start(_ index: UInt32, sink: UInt32, on pulse: any StreamServer) -> Bool {
        guard entries[index] == nil else { return false }
        guard let meter = pulse.meter(sinkInput: index, sink: sink, onPeak: { [weak self] peak in
            self?.peak(peak, of: index)
        }) else { return false }
        meter.onEnd = { [weak self] _ in
            // A meter that ends before its verdict (the stream moved away for good, the server refused
            // it) leaves the stream to the engine's assumption: audible.
            guard let self, let entry = self.entries.removeValue(forKey: index), !entry.reported else { return }
            self.onAudibility(index, true)
        }
        let now = MainLoop.monotonicMicroseconds()
        entries[index] = Entry(meter: meter, judge: AudibilityDetector(startedAt: now, thresholds: thresholds), reported: false, startedAt: now)
        return true
    }

    /// Stops measuring a sink input (it went away, or its sound no longer matters).
    package func stop(_ index: UInt32) {
        entries.removeValue(forKey: index)?.meter.close()
    }

    /// Stops every meter (the server went away, or the daemon stops).
    package func stopAll() {
        for index in entries.keys.sorted() { stop(index) }
    }

    private func peak(_ peak: Float, of index: UInt32) {
        guard var entry = entries[index] else { return }
        let now = MainLoop.monotonicMicroseconds()
        var change = entry.judge.add(peak: peak, at: now)
        if change == .becameSilent, !entry.reported, now &- entry.startedAt < Self.firstSilence {
            // Too early to call it silent: judge afresh from here.
            entry.judge = AudibilityDetector(startedAt: now, thresholds: thresholds)
            change = nil
        }
        var audible: Bool?
        switch change {
        case .becameAudible?: audible = true
        case .becameSilent?: audible = false
        case nil where !entry.reported && entry.judge.isSound(peak): audible = true
        case nil: break
        }
        if audible != nil { entry.reported = true }
        entries[index] = entry
        if let audible { onAudibility(index, audible) }
    }
}
