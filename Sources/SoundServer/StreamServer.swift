/// A sound server's playback and capture streams, as the daemon sees them: what it hears and what it writes.
///
/// Exactly the surface of ``PulseConnection`` that the daemon uses, so that its actuation and recovery can
/// be tested against a fake server in a unit test (no sound server, no bus), besides the real-server tests.
/// ``PulseConnection`` is the one real conformer; its documentation tells the order of the deliveries,
/// which a fake must keep: ``onStateChange`` with `.ready`, then ``onInitialStreams`` and
/// ``onInitialCaptures``, then the changes. Every closure runs on the daemon's main loop.
public protocol StreamServer: AnyObject {
    // MARK: What the daemon hears

    var onStateChange: (PulseConnection.State) -> Void { get set }
    var onInitialStreams: ([SinkInput]) -> Void { get set }
    var onStreamAdded: (SinkInput) -> Void { get set }
    var onStreamChanged: (SinkInput) -> Void { get set }
    var onStreamRemoved: (UInt32) -> Void { get set }
    var onInitialCaptures: ([SourceOutput]) -> Void { get set }
    var onCaptureAdded: (SourceOutput) -> Void { get set }
    var onCaptureChanged: (SourceOutput) -> Void { get set }
    var onCaptureRemoved: (UInt32) -> Void { get set }
    var onSinkAdded: (Sink) -> Void { get set }
    var onSinkChanged: (Sink) -> Void { get set }
    var onSinkRemoved: (UInt32) -> Void { get set }
    var onError: (String) -> Void { get set }

    // MARK: The connection

    var state: PulseConnection.State { get }
    var isReady: Bool { get }
    /// The server's name and version, set before `.ready` is reported.
    var serverDescription: String? { get }
    func connect()
    /// Calls `completion` once the server has answered every request sent so far.
    func drain(_ completion: @escaping () -> Void)
    /// Lets go of what the backend holds outside the process, once the daemon is done (the ALSA
    /// backend's socket file). A client of a sound server holds nothing there.
    func stopServing()

    // MARK: What the daemon writes

    /// Sets a sink input's volume; its echo arrives with `levelChange == .ours`.
    func setVolume(index: UInt32, volumes: ChannelVolumes)
    /// Mutes or unmutes a sink input; its echo arrives with `levelChange == .ours`.
    func setMute(index: UInt32, muted: Bool)
    /// Every saved stream-restore entry (`nil`: the server could not tell).
    func readSavedEntries(completion: @escaping ([StreamRestoreEntry]?) -> Void)
    /// Saves one stream-restore entry; `completion` is told whether the server took it.
    func writeSavedEntry(name: String, volume: ChannelVolumes, muted: Bool, device: String?,
                         completion: ((Bool) -> Void)?)

    // MARK: Measuring

    /// Starts measuring a sink input's peaks (nil: it cannot be measured; the engine then takes it as audible).
    func meter(sinkInput: UInt32, sink: UInt32, onPeak: @escaping (Float) -> Void) -> PeakMeter?
}

extension StreamServer {
    public func stopServing() {}
}

extension PulseConnection: StreamServer {}
