import AudioPolicy
import EventLoop
import PulseBackend
import SoundBackend
/// The user's mixer in the soak: a libpulse connection of its own, as pavucontrol has, through which
/// the user changes streams' volumes and mutes, and from which the soak reads what the server reports
/// (every sink input, live, and the saved stream-restore entries).
///
/// It reconnects when the server goes away (the soak restarts it), every `retryInterval`.
final class UserMixer {
    /// Every sink input as last reported.
    private(set) var streams: [UInt32: SinkInput] = [:]
    /// When each stream's volume or mute last changed (monotonic µs): a stream the daemon ramps
    /// changes every 15 ms.
    private(set) var levelChangedAt: [UInt32: UInt64] = [:]
    /// Called whenever a stream appears, changes or goes, and when the connection is ready again.
    var onChange: () -> Void = {}
    /// When each stream was last seen on another sink than before (monotonic µs).
    private(set) var sinkChangedAt: [UInt32: UInt64] = [:]
    /// For each watched sink, every stream seen on it since the watch began.
    private var seenOn: [UInt32: Set<UInt32>] = [:]
    /// Watched sinks whose removal has been reported.
    private(set) var removedSinks: Set<UInt32> = []
    /// When the user last wrote each stream's volume or mute through this mixer (monotonic µs).
    private var userWroteAt: [UInt32: UInt64] = [:]
    /// Called when someone else (the daemon) changes a stream's level within ``raceWindow`` of the
    /// user's write to it: the stream as it is now and how long after the user's write (µs).
    var onChangeAfterUser: (SinkInput, UInt64) -> Void = { _, _ in }
    /// How soon after the user's write another writer's change counts as racing it: the daemon fetches
    /// a changed stream within milliseconds, so a write of its own that soon may be computed from the
    /// level before the user's (docs/tests.md, the known gap of a change just before a ramp step).
    static let raceWindow: UInt64 = 100_000

    private let loop: MainLoop
    private let connection: PulseConnection
    private var retry: MainLoop.Timer?
    static let retryInterval: UInt64 = 200_000

    init(loop: MainLoop) {
        self.loop = loop
        connection = PulseConnection(loop: loop, applicationName: "soak mixer",
                                     properties: ["application.id": "org.audio-policyd.soak-mixer"])
        connection.onNews = { [unowned self] news in
            switch news {
            case let .initialStreams(list):
                streams = Dictionary(list.map { ($0.index, $0) }, uniquingKeysWith: { $1 })
                list.forEach(noteSink)
            case let .streamAdded(stream):
                streams[stream.index] = stream
                noteSink(of: stream)
            case let .streamChanged(stream):
                let now = MainLoop.monotonicMicroseconds()
                if stream.levelChange != .none { levelChangedAt[stream.index] = now }
                if stream.levelChange == .theirs, let wrote = userWroteAt.removeValue(forKey: stream.index),
                   now &- wrote < Self.raceWindow {
                    onChangeAfterUser(stream, now &- wrote)
                }
                if let old = streams[stream.index], old.sinkIndex != stream.sinkIndex {
                    sinkChangedAt[stream.index] = MainLoop.monotonicMicroseconds()
                }
                streams[stream.index] = stream
                noteSink(of: stream)
            case let .streamRemoved(index):
                streams[index] = nil
                levelChangedAt[index] = nil
                userWroteAt[index] = nil
                sinkChangedAt[index] = nil
            case let .sinkRemoved(index):
                guard seenOn[index] != nil else { return }
                removedSinks.insert(index)
            case .state(.failed), .state(.terminated):
                streams = [:]
                retry?.schedule(after: Self.retryInterval)
                return
            default:
                return
            }
            onChange()
        }
        retry = MainLoop.Timer(loop: loop) { [unowned self] in connection.connect() }
    }

    /// Starts noting every stream seen on sink `index`, from those on it now.
    ///
    /// What a sink had on it when it went cannot be read just before it goes: on PipeWire, WirePlumber
    /// now and then puts a stream the user just moved away back on the sink it came from, and the news
    /// of that may still be on its way when the soak unloads the sink. The daemon sees it, so the soak's
    /// user must too.
    func watch(sink index: UInt32) {
        seenOn[index] = Set(streams.values.filter { $0.sinkIndex == index }.map(\.index))
        removedSinks.remove(index)
    }

    /// Ends the watch of sink `index`: every stream seen on it meanwhile (some may have gone since).
    func stopWatching(sink index: UInt32) -> Set<UInt32> {
        removedSinks.remove(index)
        return seenOn.removeValue(forKey: index) ?? []
    }

    private func noteSink(of stream: SinkInput) {
        seenOn[stream.sinkIndex]?.insert(stream.index)
    }

    /// Whether the connection is ready and has taken in the server's streams.
    var isReady: Bool { connection.isReady }

    /// The server's name and version.
    var serverDescription: String? { connection.serverDescription }

    func connect() {
        connection.connect()
    }

    func disconnect() {
        retry?.cancel()
        connection.disconnect()
    }

    /// Sets a stream's volume, as the user would.
    func setVolume(_ index: UInt32, to volume: ChannelVolumes) {
        userWroteAt[index] = MainLoop.monotonicMicroseconds()
        connection.setVolume(index: index, volumes: volume)
    }

    /// Mutes or unmutes a stream, as the user would.
    func setMute(_ index: UInt32, _ muted: Bool) {
        userWroteAt[index] = MainLoop.monotonicMicroseconds()
        connection.setMute(index: index, muted: muted)
    }

    /// Every saved stream-restore entry; nil when the read failed.
    func readSavedEntries(_ completion: @escaping ([StreamRestoreEntry]?) -> Void) {
        connection.readSavedEntries(completion: completion)
    }
}
