/// A meter whose peaks its backend measures and hands in with ``deliver(_:)`` (the ALSA plugin measures
/// every stream itself): the same surface to the daemon as a recording one, so its audibility is judged
/// the same way.
public final class FedMeter: StreamMeter {
    /// The stream measured.
    public let sinkInput: UInt32
    /// Called with each peak, linear (0 = digital silence, 1 = full scale).
    public var onPeak: (Float) -> Void
    public var onEnd: (String) -> Void = { _ in }
    /// Peaks delivered so far.
    public private(set) var peakCount = 0
    /// Until ``close()`` or ``finish(_:)``.
    public private(set) var isMeasuring = true
    /// The backend's way to stop reporting, told once at ``close()``.
    private var onClose: (() -> Void)?

    public init(fedPeaksOf sinkInput: UInt32, onClose: @escaping () -> Void, onPeak: @escaping (Float) -> Void) {
        self.sinkInput = sinkInput
        self.onClose = onClose
        self.onPeak = onPeak
    }

    public func close() {
        guard isMeasuring else { return }
        isMeasuring = false
        onClose.take()?()
    }

    /// The next peak (linear, 1 = full scale); nothing once the meter has ended.
    public func deliver(_ peak: Float) {
        guard isMeasuring else { return }
        peakCount += 1
        onPeak(peak)
    }

    /// The stream ended: ``onEnd`` is told, as when a recorded sink input goes away.
    public func finish(_ reason: String) {
        onClose = nil
        guard isMeasuring else { return }
        isMeasuring = false
        onEnd(reason)
    }
}
