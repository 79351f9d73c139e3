/// A running measurement of one playback stream's peaks, whichever backend measures it: the pulse
/// backend records the stream's monitor (`PeakMeter`), the ALSA backend hands in what its plugin
/// measured (``FedMeter``). The daemon keeps it while the engine wants the stream measured
/// (``StreamMeasurement``, in the stream's record); letting it go closes it.
public protocol StreamMeter: AnyObject {
    /// Called once, with the reason, when the meter ends by itself (its stream went away, the server
    /// refused it); not after ``close()``.
    var onEnd: (String) -> Void { get set }
    /// Stops measuring: no more peaks, no ``onEnd``. Safe to call twice.
    func close()
}
