import AudioPolicy
import EventLoop
import SoundBackend

/// The peak meters of the streams the engine wants measured (``Command/measure(_:_:)``), each kept in
/// its stream's record (``LiveStream/measurement``) and closed with it.
extension Actuation {
    /// Starts or stops measuring a stream (a meter already running is kept); a new meter's verdict
    /// follows, and the engine hears that it is being measured.
    func measure(_ index: UInt32, _ on: Bool) {
        guard on else { return stopMeter(index) }
        guard let server, let live = streams[index], live.measurement == nil else { return }
        guard let meter = server.meter(live.id, sink: live.input.sinkIndex, onPeak: { [weak self] peak in
            self?.heard(peak, of: index)
        }) else { return }
        meter.onEnd = { [weak self] _ in
            // A meter that ends before its verdict (the stream moved away for good, the server refused
            // it) leaves the stream to the engine's assumption: audible.
            guard let self, let ended = streams.update(index, { live in
                defer { live.measurement = nil }
                return live.measurement
            }) ?? nil, !ended.reported else { return }
            onAudibility(index, true)
        }
        let measurement = StreamMeasurement(meter, thresholds: audibility, at: MainLoop.monotonicMicroseconds())
        update(index) { $0.measurement = measurement }
        feedLater(.measuring(live.id))
    }

    /// Stops measuring a stream (its sound no longer matters).
    func stopMeter(_ index: UInt32) {
        streams.update(index) { live in
            defer { live.measurement = nil }
            return live.measurement
        }??.meter.close()
    }

    /// Stops every meter (the server went away, or the daemon stops).
    func stopMeters() {
        for index in streams.indexes { stopMeter(index) }
    }

    /// A reload's `[audibility]` handed to the running meters.
    func judgeMeters(by thresholds: AudibilityThresholds) {
        for index in streams.indexes { update(index) { $0.measurement?.judge(by: thresholds) } }
    }

    private func heard(_ peak: Float, of index: UInt32) {
        let now = MainLoop.monotonicMicroseconds()
        guard let audible = streams.update(index, { $0.measurement?.heard(peak, at: now) }) ?? nil else { return }
        onAudibility(index, audible)
    }
}
