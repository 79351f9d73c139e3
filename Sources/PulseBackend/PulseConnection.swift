import AudioPolicy
import CPulse
import EventLoop
import SoundBackend

/// The daemon's connection to the sound server (PulseAudio, or PipeWire
/// through pipewire-pulse): a `pa_context` on the daemon's ``MainLoop``.
///
/// Once ready it tracks every sink input, source output and sink and tells
/// ``onNews`` (``ServerNews``), in this order: the initial snapshot of streams,
/// then of captures, the sinks, then every change as the server reports it.
/// ``peakMeter(sinkInput:sink:onPeak:)`` measures one sink input's level.
/// Writes (`setVolume`, `setMute`, stream-restore) are fire and forget;
/// failures arrive as ``ServerNews/error(_:)``.
///
/// Every closure runs on the main loop, inside a libpulse callback. They
/// may call back into the connection (to set a volume, say), and the
/// snapshots they get are plain values that outlive the callback.
///
/// ```swift
/// let pulse = PulseConnection(loop: loop, applicationName: "audio-policyd")
/// pulse.onNews = { news in if case let .streamAdded(stream) = news { print(stream.index) } }
/// pulse.connect()
/// ```
public final class PulseConnection {
    /// Where the connection stands (the seam's ``ConnectionState``).
    public typealias State = ConnectionState

    // MARK: - What the daemon hears

    /// Every piece of news, in order (``ServerNews``).
    public var onNews: (ServerNews) -> Void = { _ in }
    /// For `bench`, which times the daemon: called just before ``ServerNews/streamAdded(_:)`` for a stream the server
    /// announced while connected, with when its announcement entered the process and when the answer
    /// describing it arrived (monotonic µs). The stream itself carries no timing.
    public var onStreamTimed: ((_ index: UInt32, _ announced: UInt64, _ described: UInt64) -> Void)?

    /// The current state.
    public private(set) var state: State = .unconnected

    /// Whether the connection is ready for requests.
    public var isReady: Bool { state == .ready }

    /// The server's name and version, e.g. `pulseaudio 16.1` or
    /// `PulseAudio (on PipeWire 0.3.65) 15.0.0`; set before `.ready` is reported.
    public internal(set) var serverDescription: String?
    /// The server instance's cookie, told with its description (``SavedLevels/serverCookie``).
    var cookie: UInt32?

    /// Monotonic time (µs) at which the last subscription event entered the
    /// process: the start of the daemon's reaction time.
    public internal(set) var lastEventReceivedAt: UInt64?

    // MARK: - Internals

    let loop: MainLoop
    let applicationName: String
    let properties: [String: String]
    /// The current context; a new one is made for each ``connect()``.
    private(set) var context: OpaquePointer?
    private var contextBox: ContextBox?

    /// What the streams code keeps between events (see PulseConnection+Streams).
    var tracker = StreamTracker()
    /// What the capture code keeps between events (see PulseConnection+Captures).
    var captures = CaptureTracker()
    /// The sinks as last delivered, and the fetches in flight (true: fetch again when it is answered).
    var sinks: [UInt32: Sink] = [:]
    var sinkFetches: [UInt32: Bool] = [:]
    /// The acknowledged requests not answered yet, which a drain waits for.
    var pendingAnswers = PendingAnswers()

    /// Creates an unconnected connection.
    ///
    /// - Parameters:
    ///   - applicationName: shown by `pactl list clients` and mixers.
    ///   - properties: further client properties (`application.id`, …).
    public init(loop: MainLoop, applicationName: String, properties: [String: String] = [:]) {
        self.loop = loop
        self.applicationName = applicationName
        self.properties = properties
    }

    deinit {
        tearDownContext()
    }

    // MARK: - Connecting

    /// Connects to the server named by `PULSE_SERVER` (or client.conf, or
    /// the per-user default), reporting progress through ``onStateChange``.
    ///
    /// The server name is left to libpulse (a NULL server), so the usual
    /// environment applies. Flags: `PA_CONTEXT_NOAUTOSPAWN` — the daemon
    /// must never start a sound server itself. Not `PA_CONTEXT_NOFAIL`: it
    /// waits only when no server is named at all, and only by watching the
    /// D-Bus session and system buses for `org.pulseaudio.Server`; so a
    /// missing server is reported as ``State/failed(_:)`` at once and the
    /// daemon decides when to call `connect()` again.
    ///
    /// Calling it while connected starts over with a new context.
    public func connect() {
        tearDownContext()
        tracker = StreamTracker()
        captures = CaptureTracker()
        sinks = [:]
        sinkFetches = [:]

        let proplist = PropertyList.make(properties)
        defer { pa_proplist_free(proplist) }
        guard let context = pa_context_new_with_proplist(loop.api, applicationName, proplist) else {
            setState(.failed("pa_context_new failed"))
            return
        }
        let box = ContextBox(connection: self)
        let userdata = Unmanaged.passUnretained(box).toOpaque()
        pa_context_set_state_callback(context, ContextBox.stateCallback, userdata)
        pa_context_set_subscribe_callback(context, ContextBox.subscribeCallback, userdata)
        self.context = context
        self.contextBox = box

        if pa_context_connect(context, nil, PA_CONTEXT_NOAUTOSPAWN, nil) < 0 {
            setState(.failed(Self.errorText(context)))
        }
    }

    /// Closes the connection; ``onStateChange`` reports `.terminated`.
    public func disconnect() {
        guard let context else { return }
        pa_context_disconnect(context)
        // The state callback has reported .terminated by now.
        tearDownContext()
        if state != .terminated { setState(.terminated) }
    }

    private func tearDownContext() {
        guard let context else { return }
        // No callbacks into a connection that is letting the context go.
        pa_context_set_state_callback(context, nil, nil)
        pa_context_set_subscribe_callback(context, nil, nil)
        pa_context_disconnect(context)
        pa_context_unref(context)
        self.context = nil
        self.contextBox = nil
    }

    func setState(_ newState: State) {
        guard newState != state else { return }
        state = newState
        onNews(.state(newState))
    }

    /// Handles a `pa_context` state change.
    fileprivate func contextStateChanged() {
        guard let context else { return }
        switch pa_context_get_state(context) {
        case PA_CONTEXT_UNCONNECTED:
            setState(.unconnected)
        case PA_CONTEXT_CONNECTING, PA_CONTEXT_AUTHORIZING, PA_CONTEXT_SETTING_NAME:
            setState(.connecting)
        case PA_CONTEXT_READY:
            // Reported as .ready when the server info arrives (before the
            // initial snapshot, since replies come in request order).
            startTracking()
        case PA_CONTEXT_FAILED:
            setState(.failed(Self.errorText(context)))
        case PA_CONTEXT_TERMINATED:
            setState(.terminated)
        default:
            break
        }
    }

    /// Whether the context can take requests (it may be ready a moment
    /// before ``state`` says so).
    var contextIsReady: Bool {
        guard let context else { return false }
        return pa_context_get_state(context) == PA_CONTEXT_READY
    }

    // MARK: - Writing

    /// Sets a sink input's per-channel volume and remembers it, so the
    /// server's echo arrives with `levelChange == .ours`.
    public func setVolume(index: UInt32, volumes: ChannelVolumes) {
        guard let context, contextIsReady else {
            onNews(.error("set volume of sink input \(index): not connected"))
            return
        }
        let order = tracker.nextToken()
        tracker.ownWrites[index, default: OwnWrites()].recordVolume(
            volumes, at: MainLoop.monotonicMicroseconds(), order: order)
        var cvolume = volumes.cVolume
        let request = AcknowledgedRequest(connection: self, action: "set volume of sink input \(index)",
                                          toleratesVanishedStream: true)
        request.onEnd = { [weak self] _ in self?.writeAnswered(index, order: order) }
        let started = request.start { userdata in
            pa_context_set_sink_input_volume(context, index, &cvolume, AcknowledgedRequest.callback, userdata)
        }
        if !started { reportFailure(of: request.action, context: context) }
    }

    /// Mutes or unmutes a sink input and remembers it, like ``setVolume(index:volumes:)``.
    public func setMute(index: UInt32, muted: Bool) {
        guard let context, contextIsReady else {
            onNews(.error("set mute of sink input \(index): not connected"))
            return
        }
        let order = tracker.nextToken()
        tracker.ownWrites[index, default: OwnWrites()].recordMute(
            muted, at: MainLoop.monotonicMicroseconds(), order: order)
        let request = AcknowledgedRequest(connection: self, action: "set mute of sink input \(index)",
                                          toleratesVanishedStream: true)
        request.onEnd = { [weak self] _ in self?.writeAnswered(index, order: order) }
        let started = request.start { userdata in
            pa_context_set_sink_input_mute(context, index, muted ? 1 : 0, AcknowledgedRequest.callback, userdata)
        }
        if !started { reportFailure(of: request.action, context: context) }
    }

    /// The server answered write `order` to stream `index`: a snapshot fetched from now on shows it
    /// (``OwnWrites``), so it can no longer be taken for the echo of a later change.
    private func writeAnswered(_ index: UInt32, order: UInt64) {
        let answer = tracker.nextToken()
        tracker.ownWrites[index]?.answered(order, at: answer)
    }

    /// Calls `completion` once the server has answered every request sent
    /// so far (at once when the connection is gone), so the daemon can quit
    /// without losing its last writes.
    ///
    /// A round trip and every acknowledged request sent before it (``PendingAnswers``: pipewire-pulse
    /// answers writes after a round trip sent later), not `pa_context_drain`. libpulse keeps one drain
    /// callback per context (a second `pa_context_drain` took the first over, and recovery never said it
    /// was done), and a drain still registered when the context fails in the middle of a reply aborts the
    /// process (`Assertion 'o->context' failed at context.c:1158, set_dispatch_callbacks()`: a 40 s churn
    /// on PipeWire, the server restarting).
    public func drain(_ completion: @escaping () -> Void) {
        guard let context, contextIsReady else {
            completion()
            return
        }
        let before = pendingAnswers.mark()
        roundTrip(context) { [weak self] in
            guard let self else { return completion() }
            for ready in self.pendingAnswers.whenAnswered(before: before, completion) { ready() }
        }
    }

    /// A bare round trip (a server-info request): `completion` once it is answered, or at once when it
    /// cannot be sent. Not a drain on its own: on pipewire-pulse a write sent before it may still be out.
    func roundTrip(_ context: OpaquePointer, _ completion: @escaping () -> Void) {
        let request = RoundTripRequest(completion: completion)
        if !request.start({ pa_context_get_server_info(context, RoundTripRequest.callback, $0) }) {
            completion()
        }
    }

    /// An acknowledged request ended: runs the drains that waited for it last.
    func requestEnded(_ number: UInt64) {
        for ready in pendingAnswers.ended(number) { ready() }
    }

    // MARK: - Errors

    /// Reports `action` as failed with the context's last error.
    func reportFailure(of action: String, context: OpaquePointer?) {
        onNews(.error("\(action): \(Self.errorText(context))"))
    }

    static func errorText(_ context: OpaquePointer?) -> String {
        guard let text = pa_strerror(pa_context_errno(context)) else { return "unknown error" }
        return String(cString: text)
    }
}

// MARK: - C side

/// What the context's long-lived callbacks reach. The connection owns it
/// and lets it go together with the context, so it is passed unretained.
private final class ContextBox {
    weak var connection: PulseConnection?

    init(connection: PulseConnection) {
        self.connection = connection
    }

    static func connection(_ userdata: UnsafeMutableRawPointer?) -> PulseConnection? {
        guard let userdata else { return nil }
        return Unmanaged<ContextBox>.fromOpaque(userdata).takeUnretainedValue().connection
    }

    static let stateCallback: pa_context_notify_cb_t = { _, userdata in
        connection(userdata)?.contextStateChanged()
    }

    static let subscribeCallback: pa_context_subscribe_cb_t = { _, event, index, userdata in
        // Taken first: the daemon's reaction time starts here.
        let receivedAt = MainLoop.monotonicMicroseconds()
        connection(userdata)?.subscriptionEvent(event, index: index, receivedAt: receivedAt)
    }
}

/// A round trip (``PulseConnection/drain(_:)``): completes once, when answered or when the context goes.
private final class RoundTripRequest: PulseRequest {
    private var completion: (() -> Void)?

    init(completion: @escaping () -> Void) {
        self.completion = completion
    }

    private func complete() {
        let completion = self.completion
        self.completion = nil
        completion?()
    }

    override func ended(cancelled: Bool) {
        complete()
    }

    static let callback: pa_server_info_cb_t = { _, _, userdata in
        let request: RoundTripRequest? = borrow(userdata)
        request?.complete()
    }
}
