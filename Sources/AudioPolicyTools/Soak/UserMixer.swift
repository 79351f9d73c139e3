import EventLoop
import SoundServer
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
            case let .streamAdded(stream):
                streams[stream.index] = stream
            case let .streamChanged(stream):
                if stream.levelChange != .none { levelChangedAt[stream.index] = MainLoop.monotonicMicroseconds() }
                streams[stream.index] = stream
            case let .streamRemoved(index):
                streams[index] = nil
                levelChangedAt[index] = nil
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
        connection.setVolume(index: index, volumes: volume)
    }

    /// Mutes or unmutes a stream, as the user would.
    func setMute(_ index: UInt32, _ muted: Bool) {
        connection.setMute(index: index, muted: muted)
    }

    /// Every saved stream-restore entry; nil when the read failed.
    func readSavedEntries(_ completion: @escaping ([StreamRestoreEntry]?) -> Void) {
        connection.readSavedEntries(completion: completion)
    }
}
