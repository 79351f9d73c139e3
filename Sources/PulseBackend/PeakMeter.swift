import AudioPolicy
import CPulse
import SoundBackend

/// Measures how loud one sink input plays: a record stream on the monitor
/// of the sink the sink input plays to, restricted to that sink input
/// (`pa_stream_set_monitor_stream`), in the server's peak-detect mode.
///
/// The server does the measuring: with `PA_STREAM_PEAK_DETECT` and a record
/// rate far below the sink's, each recorded sample is the peak (largest
/// absolute value) of the input over its period. At ``rate`` 10 Hz, mono
/// float, and a fragment of one sample (4 bytes), the daemon wakes at most
/// ten times a second per meter, and ``onPeak`` gets a linear peak in
/// 0...1 (1 = 0 dBFS) per wake-up. Made with
/// ``PulseConnection/peakMeter(sinkInput:sink:onPeak:)``.
///
/// Flags: `PA_STREAM_PEAK_DETECT`; `PA_STREAM_ADJUST_LATENCY` (so the
/// server honours the 4-byte fragment instead of its default 2 s);
/// `PA_STREAM_DONT_MOVE` (nobody may move the meter to another source);
/// `PA_STREAM_DONT_INHIBIT_AUTO_SUSPEND` (a meter alone never keeps a sink
/// awake: an idle sink suspends and the meter simply gets no data).
///
/// The sink input ending (or the server killing the meter when the sink
/// input moves to another sink, which PulseAudio does to every stream
/// attached to it) makes the stream fail. The meter then asks where the
/// sink input is: gone, it ends (``State/ended(_:)``, ``onEnd``); still
/// there, it reconnects to the monitor of the sink it now plays to, so it
/// follows moves. It gives up after three failures in a row without a peak
/// in between.
///
/// Main loop only, like everything on the connection. The meter owns its
/// `pa_stream` and holds a reference on the context, so it stays safe to
/// use (and to close) after the connection reconnected or went away.
public final class PeakMeter: StreamMeter {
    public enum State: Equatable, Sendable {
        /// Looking up the monitor source, or connecting the stream.
        case starting
        /// Connected; peaks arrive (while the sink runs).
        case measuring
        /// Ended for the reason given (the sink input ended, the server
        /// refused, ``PeakMeter/close()``); no more peaks.
        case ended(String)
    }

    /// Records per second on PulseAudio: at most this many ``onPeak`` calls (and wake-ups) a second. Six
    /// keeps a measured stream within 10 daemon wake-ups a second with the server's own events on top (at
    /// 10, the benchmark counted 15 with a silent screen-reader stream), and still gives two or three
    /// peaks in the 400 ms hangover. pipewire-pulse records at 10 a second, two peaks per fragment (see
    /// ``PulseConnection/peakMeter(sinkInput:sink:onPeak:)``): about 6 deliveries a second too.
    public static let rate: UInt32 = 6
    static let pipeWireRate: UInt32 = 10
    /// Failures in a row (without a peak in between) after which the meter gives up.
    static let maxFailuresInARow = 3

    /// The sink input measured.
    public let sinkInput: UInt32
    /// The sink it plays to, as far as the meter knows (updated when it follows a move).
    public private(set) var sink: UInt32
    /// The monitor source recorded from, once known.
    public private(set) var source: UInt32?
    public private(set) var state: State = .starting
    /// Called with each peak, linear (0 = digital silence, 1 = full scale).
    public var onPeak: (Float) -> Void
    /// Called once when the meter ends by itself (not after ``close()``).
    public var onEnd: (String) -> Void = { _ in }
    /// Peaks delivered so far.
    public private(set) var peakCount = 0
    /// Times the meter connected again after its stream failed (moves followed).
    public private(set) var reconnections = 0

    /// The libpulse context recorded through.
    private let context: OpaquePointer
    private var stream: OpaquePointer?
    private let box: Box
    private var failuresInARow = 0
    private let fragmentSamples: UInt32
    private let rate: UInt32
    /// Tells the reply to the current lookup from a stale one.
    private var attempt: UInt64 = 0

    /// `fragmentSamples`: peaks per fragment sent, 1 (6 a second); see ``PulseConnection/peakMeter(sinkInput:sink:onPeak:)``.
    init(context: OpaquePointer, sinkInput: UInt32, sink: UInt32, rate: UInt32 = PeakMeter.rate,
         fragmentSamples: UInt32 = 1,
         onPeak: @escaping (Float) -> Void) {
        pa_context_ref(context)
        self.context = context
        self.sinkInput = sinkInput
        self.sink = sink
        self.onPeak = onPeak
        self.rate = rate
        self.fragmentSamples = fragmentSamples
        self.box = Box()
        box.meter = self
        if sink == invalidIndex {
            // pipewire-pulse announces a sink input before it is linked, with no sink (PA_INVALID_INDEX).
            // With no device named, the server records the monitor of the sink the sink input plays to
            // (PulseAudio picks it for a monitor stream; pipewire-pulse links to the sink input itself).
            connect(to: nil)
        } else {
            lookUpMonitor(of: sink)
        }
    }

    deinit {
        tearDownStream()
        pa_context_unref(context)
    }

    /// Disconnects the stream; no more peaks, no ``onEnd``. Safe to call twice.
    public func close() {
        attempt += 1
        tearDownStream()
        if case .ended = state { return }
        state = .ended("closed")
    }

    // MARK: - Connecting

    /// Asks for the sink's monitor source, then connects to it.
    private func lookUpMonitor(of sink: UInt32) {
        attempt += 1
        self.sink = sink
        let request = SinkMonitorRequest(meter: self, attempt: attempt)
        if !request.start({ pa_context_get_sink_info_by_index(context, sink, SinkMonitorRequest.callback, $0) }) {
            end("get sink \(sink): \(errorText)")
        }
    }

    fileprivate func monitorFound(_ source: UInt32?, attempt: UInt64) {
        guard attempt == self.attempt, state == .starting || state == .measuring else { return }
        guard let source, source != invalidIndex else {
            // The sink is gone (or has no monitor): the sink input may have moved.
            failed("sink \(sink) has no monitor source")
            return
        }
        connect(to: source)
    }

    /// Connects to `source` (`nil`: the one the server picks for the sink input).
    private func connect(to source: UInt32?) {
        self.source = source
        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: rate, channels: 1)
        let properties = PropertyList.make([MeterMarker.key: MeterMarker.value, "media.name": MeterMarker.streamName])
        defer { pa_proplist_free(properties) }
        guard let stream = pa_stream_new_with_proplist(context, MeterMarker.streamName, &spec, nil, properties) else {
            end("pa_stream_new: \(errorText)")
            return
        }
        self.stream = stream
        let userdata = Unmanaged.passUnretained(box).toOpaque()
        pa_stream_set_state_callback(stream, Box.stateCallback, userdata)
        pa_stream_set_read_callback(stream, Box.readCallback, userdata)
        guard pa_stream_set_monitor_stream(stream, sinkInput) == 0 else {
            end("set monitor stream \(sinkInput): \(errorText)")
            return
        }
        // One float per fragment (on PulseAudio): the server sends each peak as it is made.
        let unset = UInt32.max
        var attributes = pa_buffer_attr(
            maxlength: unset, tlength: unset, prebuf: unset, minreq: unset,
            fragsize: fragmentSamples * UInt32(MemoryLayout<Float>.size))
        let flags = pa_stream_flags_t(
            rawValue: PA_STREAM_PEAK_DETECT.rawValue | PA_STREAM_ADJUST_LATENCY.rawValue
                | PA_STREAM_DONT_MOVE.rawValue | PA_STREAM_DONT_INHIBIT_AUTO_SUSPEND.rawValue)
        if pa_stream_connect_record(stream, source.map(String.init), &attributes, flags) < 0 {
            failed("connect to source \(source.map(String.init) ?? "of sink input \(sinkInput)"): \(errorText)")
            return
        }
        if source == nil { self.source = nil }
    }

    // MARK: - The stream

    fileprivate func streamStateChanged() {
        guard let stream else { return }
        switch pa_stream_get_state(stream) {
        case PA_STREAM_READY:
            state = .measuring
            let device = pa_stream_get_device_index(stream)
            if device != invalidIndex { source = device }
        case PA_STREAM_FAILED:
            failed("meter stream failed: \(errorText)")
        case PA_STREAM_TERMINATED:
            failed("meter stream terminated")
        default:
            break
        }
    }

    /// Reads every fragment the server sent and reports their largest peak.
    fileprivate func readable() {
        guard let stream else { return }
        var peak: Float = -1
        // pa_stream_readable_size is (size_t)-1 on error, i.e. negative here.
        while pa_stream_readable_size(stream) > 0 {
            var data: UnsafeRawPointer?
            var length = 0
            guard pa_stream_peek(stream, &data, &length) == 0 else {
                failed("read: \(errorText)")
                return
            }
            // Nothing buffered: nothing to drop.
            if length == 0 { break }
            // data == nil with a length is a hole (lost data): dropped unread.
            if let data {
                for offset in stride(from: 0, to: length - MemoryLayout<Float>.size + 1, by: MemoryLayout<Float>.size) {
                    peak = max(peak, abs(data.loadUnaligned(fromByteOffset: offset, as: Float.self)))
                }
            }
            pa_stream_drop(stream)
        }
        guard peak >= 0 else { return }
        peakCount += 1
        failuresInARow = 0
        onPeak(peak)
    }

    // MARK: - Failing and ending

    /// The stream failed or could not be made: find out whether the sink
    /// input is still there (and where), or give up.
    private func failed(_ reason: String) {
        tearDownStream()
        if case .ended = state { return }
        failuresInARow += 1
        guard failuresInARow <= Self.maxFailuresInARow else {
            end("\(reason) (\(failuresInARow) failures in a row)")
            return
        }
        state = .starting
        attempt += 1
        let request = SinkInputWhereaboutsRequest(meter: self, attempt: attempt, reason: reason)
        if !request.start({ pa_context_get_sink_input_info(context, sinkInput, SinkInputWhereaboutsRequest.callback, $0) }) {
            end("\(reason); get sink input \(sinkInput): \(errorText)")
        }
    }

    fileprivate func sinkInputFound(sink: UInt32?, attempt: UInt64, reason: String) {
        guard attempt == self.attempt, state == .starting else { return }
        guard let sink else {
            end("sink input \(sinkInput) ended")
            return
        }
        reconnections += 1
        if sink == invalidIndex {
            connect(to: nil)
        } else {
            lookUpMonitor(of: sink)
        }
    }

    private func end(_ reason: String) {
        tearDownStream()
        if case .ended = state { return }
        state = .ended(reason)
        onEnd(reason)
    }

    private func tearDownStream() {
        guard let stream else { return }
        self.stream = nil
        // No callbacks into a meter that is letting the stream go.
        pa_stream_set_state_callback(stream, nil, nil)
        pa_stream_set_read_callback(stream, nil, nil)
        let streamState = pa_stream_get_state(stream)
        if streamState == PA_STREAM_CREATING || streamState == PA_STREAM_READY {
            pa_stream_disconnect(stream)
        }
        pa_stream_unref(stream)
    }

    private var errorText: String { PulseConnection.errorText(context) }
}

// MARK: - C side

extension PeakMeter {
    /// What the stream's callbacks reach. The meter owns it and clears the
    /// callbacks before letting the stream go, so it is passed unretained.
    fileprivate final class Box {
        weak var meter: PeakMeter?

        static func meter(_ userdata: UnsafeMutableRawPointer?) -> PeakMeter? {
            guard let userdata else { return nil }
            return Unmanaged<Box>.fromOpaque(userdata).takeUnretainedValue().meter
        }

        static let stateCallback: pa_stream_notify_cb_t = { _, userdata in
            meter(userdata)?.streamStateChanged()
        }

        static let readCallback: pa_stream_request_cb_t = { _, _, userdata in
            meter(userdata)?.readable()
        }
    }
}

/// `pa_context_get_sink_info_by_index`, for the sink's monitor source.
private final class SinkMonitorRequest: PulseRequest {
    weak var meter: PeakMeter?
    let attempt: UInt64
    var source: UInt32?

    init(meter: PeakMeter, attempt: UInt64) {
        self.meter = meter
        self.attempt = attempt
    }

    static let callback: pa_sink_info_cb_t = { _, info, eol, userdata in
        guard let request: SinkMonitorRequest = borrow(userdata) else { return }
        if eol == 0, let info {
            request.source = info.pointee.monitor_source
        } else {
            request.meter?.monitorFound(request.source, attempt: request.attempt)
        }
    }
}

/// `pa_context_get_sink_input_info` after the meter failed: which sink, or gone?
private final class SinkInputWhereaboutsRequest: PulseRequest {
    weak var meter: PeakMeter?
    let attempt: UInt64
    let reason: String
    var sink: UInt32?

    init(meter: PeakMeter, attempt: UInt64, reason: String) {
        self.meter = meter
        self.attempt = attempt
        self.reason = reason
    }

    static let callback: pa_sink_input_info_cb_t = { _, info, eol, userdata in
        guard let request: SinkInputWhereaboutsRequest = borrow(userdata) else { return }
        if eol == 0, let info {
            request.sink = info.pointee.sink
        } else {
            request.meter?.sinkInputFound(sink: request.sink, attempt: request.attempt, reason: request.reason)
        }
    }
}
