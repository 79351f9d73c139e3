import AudioPolicy
import ControlProtocol
import EventLoop
import FoundationEssentials
import Logging
import SoundBackend

/// What the daemon shows of itself: the log of decisions, `status`, event lines to subscribers, and
/// Now Playing (``NowPlaying``).
///
/// It reads the result of each batch — the engine's snapshot, actuation's stream table, the players —
/// and changes none of them. While nobody subscribes to events, a batch is published on the next turn of
/// the loop (``published(_:)``), after the requests it led to have left.
final class Publication {
    var log: Logger
    private let loop: MainLoop
    private let clock: DaemonClock
    private unowned let reading: any EngineReading
    private let actuation: Actuation
    private let players: MediaPlayers
    private let outbox: ControlOutbox
    let nowPlaying: NowPlaying

    /// Subscribed connections and the event kinds each asked for.
    private var subscribers: [ControlServer.ClientID: Set<ControlEvent.Kind>] = [:]
    /// The stream rows last sent to subscribers, by index or hook token.
    private var reportedStreams: [String: StatusReport.Stream] = [:]
    /// The last decisions, for `status` and `top`.
    private var decisions = DecisionLog()
    /// Batches whose decisions and Now Playing wait for the next turn of the loop, and the timer that
    /// publishes them then (``published(_:)``).
    private var unpublished: [[Command]] = []
    private var publicationTimer: MainLoop.Timer?

    init(log: Logger, loop: MainLoop, clock: DaemonClock, reading: any EngineReading, actuation: Actuation, players: MediaPlayers,
         outbox: ControlOutbox) {
        self.log = log
        self.loop = loop
        self.clock = clock
        self.reading = reading
        self.actuation = actuation
        self.players = players
        self.outbox = outbox
        nowPlaying = NowPlaying(log: log, clock: clock, reading: reading, actuation: actuation, players: players)
        nowPlaying.publish = { [unowned self] event in self.publish(event) }
    }

    // MARK: - After each batch

    /// Logs and publishes a batch's decisions and Now Playing changes, then the streams whose state changed.
    ///
    /// With no subscriber, that waits for the next turn of the loop: libpulse writes the requests a
    /// batch led to (a prompt's ducks) once the callback that told the news returns, and the decisions'
    /// text, their log lines and Now Playing's MPRIS update (about a tenth of the daemon's share of a
    /// reaction) held them back. What `status` and a new subscriber read is published first
    /// (``publishWaiting()``). A subscriber's events go out at once, one batch at a time, so that none
    /// of a batch's stream states is skipped.
    func published(_ commands: [Command]) {
        guard subscribers.isEmpty else {
            publishWaiting()
            publish(batch: commands)
            publishStreamChanges()
            return
        }
        unpublished.append(commands)
        if publicationTimer == nil {
            publicationTimer = MainLoop.Timer(loop: loop) { [unowned self] in publishWaiting() }
        }
        if publicationTimer?.isScheduled != true { publicationTimer?.schedule(after: 0) }
    }

    /// How many batches wait for the next turn of the loop (read by the shell's tests).
    var waitingBatches: Int { unpublished.count }

    /// Publishes the batches that wait for the next turn of the loop, in order.
    func publishWaiting() {
        guard !unpublished.isEmpty else { return }
        publicationTimer?.cancel()
        let batches = unpublished
        unpublished = []
        for batch in batches { publish(batch: batch) }
        publishStreamChanges()
    }

    /// Logs and publishes one batch's decisions and Now Playing changes.
    private func publish(batch commands: [Command]) {
        for command in commands {
            switch command {
            case let .decision(decision):
                record(decision)
                publish(decision)
                if decision.kind == .acted || decision.kind == .reclassified {
                    log.info("\(decision)")
                } else {
                    log.debug("\(decision)")
                }
            case .nowPlaying:
                nowPlaying.ownerChanged()
            default:
                break
            }
        }
    }

    /// Keeps a decision for `status` and `top`; stream starts are left out (they would crowd out what
    /// was done to streams).
    private func record(_ decision: Decision) {
        guard decision.kind != .classified else { return }
        decisions.append(DecisionRecord(
            time: Date().timeIntervalSince1970, stream: decision.stream.rawValue, application: decision.application,
            class: decision.className, reason: decision.reason, action: decision.action))
    }

    // MARK: - Status

    func status(server: String?) -> StatusReport {
        publishWaiting()
        let policy = reading.engine.policy
        return StatusReport(nowPlaying: nowPlaying.report(), streams: statusRows(), policy: policy.source,
                            server: server, decisions: decisions.recent, policyFiles: policy.files,
                            classSettings: policy.classes.mapValues { $0.origins.mapValues { "\($0.file):\($0.line)" } })
    }

    /// Every stream (and hook interruption) the engine tracks, as `status` shows it.
    private func statusRows() -> [StatusReport.Stream] {
        reading.engine.snapshot(at: clock.now).map { status -> StatusReport.Stream in
            let index = status.stream.playbackIndex
            let live = actuation.index(of: status.stream).flatMap { actuation.streams[$0] }
            var row = StatusReport.Stream(
                index: status.isHook ? nil : index, application: status.application,
                pid: live?.input.processID,
                role: status.role, class: status.className, state: status.state, factor: status.factor,
                muted: status.muted, spoken: status.spoken, rule: status.reason,
                hook: status.isHook ? status.id : nil, volume: live?.level.own.averageLinear,
                audible: status.isHook ? nil : status.audible, measured: status.isHook ? nil : status.measured,
                target: status.target, settles: Int(status.settlesAt))
            row.appID = live?.input.properties[SandboxedStreams.appIDKey]
            row.player = live.flatMap { players.player(standingFor: $0.id)?.rawValue }
            return row
        }
    }

    // MARK: - Subscribers

    /// `client` subscribes to `kinds`: where things stand now goes out right after the reply; changes follow.
    func subscribe(_ client: ControlServer.ClientID, to kinds: [ControlEvent.Kind]) {
        publishWaiting()
        subscribers[client] = Set(kinds)
        let now = clock.now
        // Inputs first: a recorder learns of the streams before their states.
        if kinds.contains(.input) {
            for (at, event) in reading.engine.prelude(at: now) {
                outbox.send(ControlEvent(event: .input, at: Int(at), input: FixtureEvent(event)), to: client)
            }
        }
        if kinds.contains(.player) {
            for player in players.busPlayers {
                outbox.send(ControlEvent(event: .player, player: MediaPlayers.info(player, present: true)), to: client)
            }
        }
        if kinds.contains(.stream) {
            for row in statusRows() {
                reportedStreams[Self.key(of: row)] = row
                outbox.send(ControlEvent(event: .stream, stream: row, at: Int(now)), to: client)
            }
        }
        if kinds.contains(.nowPlaying) {
            outbox.send(ControlEvent(event: .nowPlaying, nowPlaying: nowPlaying.report(), at: Int(now)), to: client)
        }
    }

    /// A connection closed: its subscription ends with it.
    func clientLeft(_ client: ControlServer.ClientID) {
        subscribers[client] = nil
    }

    /// Sends `event` to every subscriber that asked for its kind.
    func publish(_ event: ControlEvent) {
        guard !subscribers.isEmpty else { return }
        var event = event
        if event.at == nil { event.at = Int(clock.now) }
        var line: String?
        for (client, kinds) in subscribers.sorted(by: { $0.key < $1.key }) where kinds.contains(event.event) {
            if line == nil { line = ControlOutbox.encode(event) }
            if let line { outbox.send(line, to: client) }
        }
    }

    /// Sends what the engine is about to be told to `input` subscribers (`audio-policyd record`), before
    /// the stream and decision lines it causes.
    func publishInput(_ event: Event) {
        guard subscribers.values.contains(where: { $0.contains(.input) }), let input = FixtureEvent(event) else { return }
        publish(ControlEvent(event: .input, input: input))
    }

    private func publish(_ decision: Decision) {
        guard subscribers.values.contains(where: { $0.contains(.decision) }) else { return }
        publish(ControlEvent(event: .decision, decision: ControlEvent.DecisionInfo(
            stream: decision.stream.rawValue, application: decision.application, class: decision.className,
            reason: decision.reason, action: decision.action, kind: decision.kind)))
    }

    // MARK: - Stream changes

    /// Streams whose state changed are published, and our MPRIS player follows a player-less owner's stream.
    func publishStreamChanges() {
        nowPlaying.refresh()
        guard subscribers.values.contains(where: { $0.contains(.stream) }) else {
            reportedStreams = [:]
            return
        }
        var seen = Set<String>()
        for row in statusRows() {
            let key = Self.key(of: row)
            seen.insert(key)
            if let old = reportedStreams[key], !Self.differs(old, row) { continue }
            reportedStreams[key] = row
            publish(ControlEvent(event: .stream, stream: row))
        }
        for key in reportedStreams.keys.sorted() where !seen.contains(key) {
            guard var gone = reportedStreams.removeValue(forKey: key) else { continue }
            gone.state = .ended
            publish(ControlEvent(event: .stream, stream: gone))
        }
    }

    private static func key(of row: StatusReport.Stream) -> String {
        row.index.map { String($0) } ?? row.hook ?? row.application
    }

    /// Whether a subscriber should hear of the change (not of every ramp step's factor).
    private static func differs(_ old: StatusReport.Stream, _ new: StatusReport.Stream) -> Bool {
        old.state != new.state || old.class != new.class || old.muted != new.muted || old.spoken != new.spoken
            || old.audible != new.audible || old.target != new.target
            || old.role != new.role || old.application != new.application
    }
}
