import EventLoop
import PulseBackend
import SoundBackend
/// The peak meters `top` draws: one per stream the daemon reports, on top's own connection to the
/// sound server.
///
/// Why not the daemon's: the daemon measures a stream only while its sound can change a decision, so
/// that idle costs it nothing; a person watching `top` wants every stream's level, and pays for it
/// (about 6 wake-ups a second per stream, in top) only while top runs. The meters are
/// ``PeakMeter``s, marked as such, so the daemon never takes them for someone recording.
final class TopMeters {
    private let pulse: PulseConnection
    private var meters: [UInt32: PeakMeter] = [:]
    /// The latest peak of each measured stream (linear).
    private(set) var peaks: [UInt32: Float] = [:]
    /// Called on the loop after a peak arrived.
    var onPeak: () -> Void = {}
    /// Called once the connection is up: the caller says which streams to follow.
    var onConnected: () -> Void = {}
    /// Whether the connection is up (meters can be made).
    private(set) var isConnected = false

    init(loop: MainLoop) {
        pulse = PulseConnection(loop: loop, applicationName: "audio-policyd top")
        pulse.onNews = { [unowned self] news in
            guard case let .state(state) = news else { return }
            switch state {
            case .ready:
                isConnected = true
                onConnected()
            case .failed, .terminated:
                isConnected = false
                meters.removeAll()
                peaks.removeAll()
            case .unconnected, .connecting:
                break
            }
        }
        pulse.connect()
    }

    /// Measures exactly the sink inputs in `streams`: new ones get a meter, gone ones lose theirs.
    func follow(_ streams: Set<UInt32>) {
        for index in meters.keys where !streams.contains(index) {
            meters.removeValue(forKey: index)?.close()
            peaks[index] = nil
        }
        guard isConnected else { return }
        for index in streams.sorted() where meters[index] == nil {
            // No sink named: the server picks the monitor of the one the stream plays to.
            guard let meter = pulse.peakMeter(sinkInput: index, sink: UInt32.max, onPeak: { [unowned self] peak in
                guard meters[index] != nil else { return }
                peaks[index] = peak
                onPeak()
            }) else { continue }
            meter.onEnd = { [unowned self] _ in
                meters[index] = nil
                peaks[index] = nil
            }
            meters[index] = meter
        }
    }

    func close() {
        for meter in meters.values { meter.close() }
        meters.removeAll()
        pulse.disconnect()
    }
}
