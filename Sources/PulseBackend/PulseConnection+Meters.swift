import SoundBackend

// Peak meters, made on the connection's context.
extension PulseConnection {
    /// Starts measuring sink input `sinkInput`, which plays to `sink`
    /// (``SinkInput/sinkIndex``); `onPeak` gets each peak on the main loop.
    /// `nil` (and ``onError``) when the connection is not ready. `sink` may be `PA_INVALID_INDEX`
    /// (pipewire-pulse announces new sink inputs so): the server then picks the monitor.
    ///
    /// Keep the meter: letting it go closes it. Set its ``PeakMeter/onEnd``
    /// to hear when the sink input ended.
    public func peakMeter(sinkInput: UInt32, sink: UInt32, onPeak: @escaping (Float) -> Void) -> PeakMeter? {
        guard let context, contextIsReady else {
            onNews(.error("meter sink input \(sinkInput): not connected"))
            return nil
        }
        // pipewire-pulse sends a record stream's data once per graph cycle, and its cycles come in powers of
        // two: a 100 ms fragment gets 4096-frame cycles at 48 kHz (85 ms, 11.7 a second); two peaks per
        // fragment at 10 a second get 8192-frame cycles (171 ms, 5.9 a second). (One peak at 6 a second
        // gave 7.7 a second, and two meters at once then got no peaks at all on 0.3.65.)
        let pipeWire = tracker.serverIsPipeWire
        let rate = pipeWire ? PeakMeter.pipeWireRate : PeakMeter.rate
        let fragmentSamples: UInt32 = pipeWire ? 2 : 1
        return PeakMeter(context: context, sinkInput: sinkInput, sink: sink, rate: rate, fragmentSamples: fragmentSamples,
                         onPeak: onPeak)
    }
}
