import AudioPolicy

/// A sound server's playback and capture streams, as the daemon sees them: what it hears and what it writes.
///
/// The one backend protocol, the seam between the daemon and a sound backend: `PulseConnection`
/// (PulseBackend: PulseAudio, pipewire-pulse) and `ALSAPluginServer` (ALSABackend: the plugins in ALSA
/// clients) implement it, and so does the unit tests' fake server (no sound server, no bus).
/// What a backend reports is one typed ``ServerNews`` stream; the order of the deliveries, which every
/// conformer keeps (``ServerNews``): `.state(.ready)`, then `.initialStreams` and `.initialCaptures`,
/// then the changes.
public protocol StreamServer: AnyObject {
    // MARK: What the daemon hears

    /// Every piece of news, in order, on the daemon's main loop.
    var onNews: (ServerNews) -> Void { get set }

    // MARK: The connection

    var state: ConnectionState { get }
    var isReady: Bool { get }
    /// The server's name and version, set before `.ready` is reported.
    var serverDescription: String? { get }
    /// The server instance the connection reaches, known before `.ready` is reported: a stream's index
    /// names one stream only on it, and the daemon's ids of the backend's streams carry it
    /// (``AudioPolicy/StreamID/playback(_:on:)``).
    var instance: ServerInstance { get }
    func connect()
    /// Calls `completion` once the server has answered every request sent so far.
    func drain(_ completion: @escaping () -> Void)
    /// Lets go of what the backend holds outside the process, once the daemon is done (the ALSA
    /// backend's socket file). A client of a sound server holds nothing there.
    func stopServing()

    // MARK: What the daemon writes

    // Every write names its stream by the engine's id: its server instance as well as its index there, so
    // a write meant for a stream of an instance that has gone (a restarted server numbers its streams from
    // the start again) reaches no stream of the next (``playbackIndex(of:)``).

    /// Sets playback stream `stream` to `factor` (linear) of its own level `own` at once: a duck or its
    /// end in one write, or (`factor` 1) its own level put back. A gain, not a volume, so that each
    /// backend turns it into its own units once: the pulse backend into a cubic volume (`own` scaled, as
    /// `pa_sw_volume_multiply` does), the ALSA plugin into its linear gain, with no cubic round trip.
    /// Its echo arrives with `levelChange == .ours`.
    func setGain(_ stream: StreamID, own: ChannelVolumes, factor: Double)
    /// Mutes or unmutes a playback stream; its echo arrives with `levelChange == .ours`.
    func setMute(_ stream: StreamID, muted: Bool)
    /// Whether playback stream `stream` moves along a ramp by itself, handed it whole in one
    /// ``rampGain(_:own:to:over:)`` (the ALSA plugin, sample by sample): the daemon then writes it
    /// once per ramp rather than once per step of its one timer (PulseAudio and pipewire-pulse, which
    /// take only volumes).
    func rampsByItself(_ stream: StreamID) -> Bool
    /// Ramps playback stream `stream` from where it is to `factor` (linear) of its own level `own` over
    /// `milliseconds`, along a straight line in decibels with gains at or below
    /// ``AudioPolicy/Level/floorDecibels`` counting as that floor, as ``AudioPolicy/Ramp`` goes. Its
    /// echo, the target, arrives with `levelChange == .ours`. A level someone else sets meanwhile ends
    /// the ramp in the backend (the daemon stops counting on it when it hears of that level).
    func rampGain(_ stream: StreamID, own: ChannelVolumes, to factor: Double, over milliseconds: Double)
    /// The levels the server saves per app or role and hands to their next stream (nil: it saves none,
    /// as on ALSA, so nothing the daemon writes outlives its stream and nothing needs repair).
    var savedLevels: (any SavedLevels)? { get }

    // MARK: Measuring

    /// Starts measuring a playback stream's peaks, played on sink `sink` (nil: it cannot be measured; the
    /// engine then takes it as audible).
    func meter(_ stream: StreamID, sink: UInt32, onPeak: @escaping (Float) -> Void) -> (any StreamMeter)?
}

/// A server's saved stream levels (PulseAudio's module-stream-restore; WirePlumber's restore-stream,
/// which pipewire-pulse shows through the same protocol extension): the entry of an app or role is
/// what its next stream starts at, and the server saves into it every level written to a stream of it,
/// the daemon's ducks included. So it is the daemon's to read and repair.
public protocol SavedLevels: AnyObject {
    /// Every saved entry (`nil`: the server could not tell).
    func readSavedEntries(completion: @escaping ([StreamRestoreEntry]?) -> Void)
    /// Saves one entry; `completion` is told whether the server took it.
    func writeSavedEntry(name: String, volume: ChannelVolumes, muted: Bool, device: String?,
                         completion: ((Bool) -> Void)?)
    /// Whether every change of a stream saves its mute too, as its key's entry. WirePlumber's
    /// restore-stream saves a stream's whole state (volume and mute) whenever any of it changes;
    /// module-stream-restore saves a stream's mute with a change only once a client has set that mute
    /// or the server restored it, and otherwise keeps the entry's older mute.
    var savesMuteWithEveryChange: Bool { get }
    /// The server instance's cookie (`pa_server_info.cookie`), a random number each time the server
    /// starts: a sink-input index means something only on the instance that gave it (indexes start
    /// again on a restarted server). Nil when the server did not tell.
    var serverCookie: UInt32? { get }
    /// The saved entries as the connection read them together with its initial streams, before
    /// `.initialStreams` (``ServerNews``): what recovery weighs a dead run's journal against (nil: the
    /// read failed, or none was made).
    var savedAtStart: [StreamRestoreEntry]? { get }
}

extension StreamServer {
    public func stopServing() {}

    /// The index on this connection's server instance of playback stream `stream`; nil for a stream of
    /// another instance (its index there may name another stream here) or for no backend stream.
    public func playbackIndex(of stream: StreamID) -> UInt32? {
        guard case let .playback(index, server) = stream.object, server == instance else { return nil }
        return index
    }

    /// The engine's id of this server instance's playback stream `index`.
    public func playbackID(_ index: UInt32) -> StreamID { .playback(index, on: instance) }

    /// A backend that takes only volumes: the daemon steps its ramps.
    public func rampsByItself(_ stream: StreamID) -> Bool { false }

    /// Without ramps of its own, a backend can only be set to the target at once.
    public func rampGain(_ stream: StreamID, own: ChannelVolumes, to factor: Double, over milliseconds: Double) {
        setGain(stream, own: own, factor: factor)
    }
}
