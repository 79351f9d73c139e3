import AudioPolicy
import EventLoop
import Logging
import SessionBus
import SoundBackend

/// The sound server as a source of engine events: connecting and reconnecting, and turning its news of
/// sink inputs and microphones into ``Event``s.
///
/// What the server said of each sink input goes into the stream's one record first (``LiveStreams``),
/// then the engine hears of it through ``feed``; a stream's player comes from ``MediaPlayers``. This is
/// the one place a stream's record begins and ends (``streamAdded(_:identity:)``, ``streamRemoved(_:)``):
/// actuation and the players each write their own facts of it there, and are told in one order.
final class ServerIntake {
    private let loop: MainLoop
    var log: Logger
    private let makeServer: (MainLoop) -> any StreamServer
    private let streams: LiveStreams
    private let actuation: Actuation
    private let players: MediaPlayers

    /// Tells the engine (``Daemon/feed(_:)``).
    var feed: (Event) -> Void = { _ in }
    /// Connected, and what an earlier run left changed put back.
    var onReady: () -> Void = {}
    /// The server went away, its streams ended for the engine. Returns whether to connect again.
    var onGone: () -> Bool = { true }
    /// A sink input ended: the engine has heard of it and actuation has let it go (its ramp with it).
    var onStreamEnded: (SinkInput, StreamID) -> Void = { _, _ in }

    /// The connection, once made (it may still be connecting).
    private(set) var server: (any StreamServer)?
    /// The server's name and version while connected (`pulseaudio 16.1`).
    private(set) var serverName: String?
    /// Armed only while the sound server is gone, to connect again with backoff.
    private var reconnectTimer: MainLoop.Timer?
    private var reconnectDelay: UInt64 = 250_000
    /// What the engine was last told of each capture stream, by source-output index (it is told again
    /// only when that changes; whether the app records is the engine's to say).
    private var captures: [UInt32: (id: StreamID, facts: CaptureFacts)] = [:]
    /// Sinks (outputs) the engine has been told of.
    private var sinks: Set<UInt32> = []
    /// Looks up what a new stream's process is: a sandboxed app's identity its properties do not tell.
    private let sandboxed = SandboxedStreams()

    init(loop: MainLoop, log: Logger, makeServer: @escaping (MainLoop) -> any StreamServer, streams: LiveStreams,
         actuation: Actuation, players: MediaPlayers) {
        self.loop = loop
        self.log = log
        self.makeServer = makeServer
        self.streams = streams
        self.actuation = actuation
        self.players = players
    }

    // MARK: - Connecting

    func connect() {
        if reconnectTimer == nil {
            reconnectTimer = MainLoop.Timer(loop: loop) { [unowned self] in self.connect() }
        }
        let server = makeServer(loop)
        server.onNews = { [unowned self] news in self.heard(news) }
        self.server = server
        actuation.connected(to: server)
        server.connect()
    }

    /// One piece of the server's news, turned into what the engine and actuation hear.
    private func heard(_ news: ServerNews) {
        switch news {
        case let .state(state): stateChanged(state)
        case let .initialStreams(inputs): reconcile(with: inputs)
        case let .streamAdded(input): streamSeen(input)
        case let .streamChanged(input): streamSeen(input)
        case let .streamRemoved(index): streamRemoved(index)
        case let .initialCaptures(captures): captures.forEach(captureChanged)
        case let .captureAdded(capture), let .captureChanged(capture): captureChanged(capture)
        case let .captureRemoved(index): captureRemoved(index)
        case let .sinkAdded(sink), let .sinkChanged(sink): sinkChanged(sink)
        case let .sinkRemoved(index): sinkRemoved(index)
        case let .error(message): log.warning("sound server: \(message)")
        }
    }

    private func stateChanged(_ state: ConnectionState) {
        switch state {
        case .ready:
            reconnectDelay = 250_000
            serverName = server?.serverDescription
            log.info("connected to \(serverName ?? "the sound server")")
        case let .failed(reason):
            log.warning("sound server connection lost: \(reason)")
            serverGone()
        case .terminated:
            serverGone()
        default:
            break
        }
    }

    /// The server went away: its streams went with it. Forget them (nothing can be restored on a
    /// server that is gone; the restore entries are repaired when we are back) and reconnect.
    private func serverGone() {
        server = nil
        serverName = nil
        actuation.disconnected()
        for index in captures.keys.sorted() { captureRemoved(index) }
        for index in streams.indexes { streamRemoved(index) }
        // After the streams: with none left on them, their outputs going is no loss to anyone.
        for index in sinks.sorted() { sinkRemoved(index) }
        guard onGone() else { return }
        let delay = reconnectDelay
        reconnectDelay = min(reconnectDelay * 2, 5_000_000)
        log.info("reconnecting in \(delay / 1000) ms")
        reconnectTimer?.schedule(after: delay)
    }

    /// The first full list after connecting: streams we knew but are gone have ended, new ones start.
    private func reconcile(with server: [SinkInput]) {
        let seen = server.map(identified)
        let identities = Dictionary(seen.map { ($0.input.index, $0.identity) }, uniquingKeysWith: { first, _ in first })
        // What an earlier run (or the server that went away) left changed is put back first, so the
        // engine starts from the user's own levels; ready once the server has taken it.
        let inputs = actuation.recoverFromJournal(seen.map(\.input)) { [unowned self] in self.onReady() }
        let present = Set(inputs.map(\.index))
        for index in streams.indexes where !present.contains(index) { streamRemoved(index) }
        for input in inputs.sorted(by: { $0.index < $1.index }) {
            if streams.knows(input.index) {
                streamChanged(input)
            } else {
                streamAdded(input, identity: identities[input.index] ?? nil)
            }
        }
        actuation.streamsJudged()
    }

    // MARK: - Sink inputs

    /// A sink input as the server tells it, with a sandboxed app's real identity: the one its record
    /// keeps, or, at its first sight, the one looked up now.
    private func identified(_ input: SinkInput) -> (input: SinkInput, identity: Sandbox.Identity?) {
        let identity = streams[input.index].map(\.sandbox) ?? sandboxed.identity(of: input) { identity in
            let host = identity.hostPID.map { "host pid \($0)" } ?? "no single host process"
            log.info("stream \(input.index): sandboxed app \(identity.appID ?? "of unknown id") (\(host); pid \(identity.sandboxPID ?? 0) in its sandbox)")
        }
        return (SandboxedStreams.identified(input, as: identity), identity)
    }

    /// A sink input added or changed: a new one begins its record.
    private func streamSeen(_ input: SinkInput) {
        let (input, identity) = identified(input)
        if streams.knows(input.index) { streamChanged(input) } else { streamAdded(input, identity: identity) }
    }

    private func streamAdded(_ input: SinkInput, identity: Sandbox.Identity?) {
        let id = streams.begin(input, on: server?.instance ?? .unnamed, sandbox: identity).id
        let savedStart = actuation.streamAppeared(input)
        defer { actuation.startJudged(input.index) }
        // Created corked, it is no sound yet: it interrupts nothing until it first plays. Muted, it was
        // muted by its user (or app) unless the mute is one of ours the server saved for its key: the
        // engine must know before it decides, or its mute fallback would take the mute over and undo it.
        // Held, an earlier run held it muted for a lost output: the engine holds it on until the user acts.
        feed(.streamStarted(id, input.properties, player: players.playerForNewStream(input.index), playing: !input.corked,
                            muted: StartOrigin.usersMute(startedMuted: input.muted, mutedByUs: savedStart.mutedByUs,
                                                         held: savedStart.held),
                            held: savedStart.held, output: OutputID(sink: input.sinkIndex)))
        // Started at one of our saved levels or mutes: the engine says what of it is put back.
        if savedStart.adopted {
            feed(.startedAtOurSave(id, levelAway: savedStart.levelAway, mutedByUs: savedStart.mutedByUs))
        }
        if !input.corked, players.isPlaying(input.index) {
            // Its player already says Playing (a new track's stream): the engine hears it, and the app
            // owns Now Playing at once.
            feed(.playback(id, playing: true))
        }
        actuation.prepareJournalEntry(input.index)
    }

    private func streamChanged(_ input: SinkInput) {
        guard let id = streams.id(of: input.index), let (old, lateStart) = actuation.streamChanged(input) else { return }
        defer { actuation.prepareJournalEntry(input.index) }
        if let lateStart, !old.muted,
           StartOrigin.usersMute(startedMuted: input.muted, mutedByUs: lateStart.mutedByUs, held: false) {
            // pipewire-pulse tells a new stream's restored mute with its late volume: the user's mute for
            // its app or role (unless it is ours), as a muted start is (see `streamAdded`).
            feed(.userMute(id, true))
        }
        // What the engine asked for while nothing could be written.
        if lateStart != nil { feed(.levelTold(id, muted: input.muted)) }
        if let lateStart, lateStart.adopted {
            feed(.startedAtOurSave(id, levelAway: lateStart.levelAway, mutedByUs: lateStart.mutedByUs))
        }
        if lateStart != nil { actuation.startJudged(input.index) }
        // Someone else's level first: it is the stream's own (``Command/adoptLevel(_:)``,
        // ``Command/yieldVolume(_:)``) before anything else in the snapshot can make the engine write the
        // stream from its old level.
        if input.levelChange == .theirs {
            if input.theirVolume { feed(.userVolume(id, input.volume.averageLinear, overtakesOurWrite: input.theirVolumeOvertaken)) }
            if input.theirMute {
                actuation.userMuted(input.index)
                feed(.userMute(id, input.muted))
            }
            actuation.journalSync(input.index)
        }
        // Moved: by the server off a sink going away, or by the user; the engine tells which.
        if input.sinkIndex != old.sinkIndex { feed(.streamMoved(id, to: OutputID(sink: input.sinkIndex))) }
        if input.properties != old.properties { feed(.streamChanged(id, input.properties)) }
        if input.corked != old.corked {
            log.debug("stream \(input.index): \(input.corked ? "corked" : "uncorked")")
            feed(.playback(id, playing: !input.corked))
        }
    }

    /// A sink input ended: the engine hears of it, the players and actuation have their say while its
    /// record is there, then the record goes (its meter with it) and actuation lets its journal entry go.
    private func streamRemoved(_ index: UInt32) {
        guard let live = streams[index] else { return }
        feed(.streamEnded(live.id))
        players.streamEnded(index)
        let end = actuation.streamEnding(index)
        streams.end(index)
        if let end { actuation.streamGone(index, end) }
        onStreamEnded(live.input, live.id)
    }

    // MARK: - Outputs

    /// A sink appeared or changed (its active port, a port's availability): the engine hears of it as
    /// an output.
    private func sinkChanged(_ sink: Sink) {
        sinks.insert(sink.index)
        feed(.output(OutputID(sink: sink.index), Output(sink)))
    }

    private func sinkRemoved(_ index: UInt32) {
        guard sinks.remove(index) != nil else { return }
        log.info("sink \(index): removed")
        feed(.outputRemoved(OutputID(sink: index)))
    }

    // MARK: - Microphones

    /// A capture stream appeared or changed: the engine is told what the server says of it, unless it
    /// is one of the daemon's own meters (no app's capture at all; each measured stream has one).
    private func captureChanged(_ capture: SourceOutput) {
        guard !capture.isOwnMeter else { return }
        let facts = CaptureFacts(properties: capture.properties, monitor: capture.isMonitor, corked: capture.corked)
        guard captures[capture.index]?.facts != facts else { return }
        let id = captures[capture.index]?.id ?? .capture(capture.index, on: server?.instance ?? .unnamed)
        captures[capture.index] = (id, facts)
        feed(.capture(id, facts.properties, monitor: facts.monitor, corked: facts.corked))
    }

    private func captureRemoved(_ index: UInt32) {
        guard let id = captures.removeValue(forKey: index)?.id else { return }
        feed(.captureEnded(id))
    }
}

/// What the engine was told of a capture stream.
private struct CaptureFacts: Equatable {
    var properties: Properties
    var monitor: Bool
    var corked: Bool
}
