// Peak meters, made on the connection's context.
extension PulseConnection {
    /// Starts measuring sink input `sinkInput`, which plays to `sink`
    /// (``SinkInput/sinkIndex``); `onPeak` gets each peak on the main loop.
    /// `nil` (and ``onError``) when the connection is not ready.
    ///
    /// Keep the meter: letting it go closes it. Set its ``PeakMeter/onEnd``
    /// to hear when the sink input ended.
    public func meter(sinkInput: UInt32, sink: UInt32, onPeak: @escaping (Float) -> Void) -> PeakMeter? {
        guard let context, contextIsReady else {
            onError("meter sink input \(sinkInput): not connected")
            return nil
        }
        return PeakMeter(context: context, sinkInput: sinkInput, sink: sink, onPeak: onPeak)
    }
}
