import AudioPolicy
import ControlProtocol
import EventLoop
import FoundationEssentials
import Glibc
import Logging
import SessionBus
import SoundServer

/// What the daemon knows of media players and of the hooks that talk to it: the session bus, the
/// MPRIS players on it, which stream each player plays, our own Now Playing player, claims and
/// subscribers on the control socket. Touched only from the loop's thread, like the rest of the daemon.
final class MediaState {
    /// The process lineages and app ids of a stream, read once when it starts.
    struct StreamOrigin {
        var pids: [Int32]
        /// The pids' lineages, read from /proc once there is a player to look for in them (reading
        /// them costs tens of microseconds a process: not on a new stream's way to its decision when
        /// no player could match).
        var lineages: [[Int32]]?
        var appIDs: Set<String>

        mutating func readLineages() -> [[Int32]] {
            if let lineages { return lineages }
            let read = pids.map { ProcessTree.lineage(of: $0) }
            lineages = read
            return read
        }
    }

    /// A control connection that claimed Now Playing: a player that takes its commands over the socket.
    struct Claim {
        let client: ControlServer.ClientID
        let token: StreamID
        let player: PlayerID
        var pid: Int32?
        var application: String
        var status: MPRISPlayer.Status?
    }

    /// Who a stream was, kept a while after it ended (the engine may still name it as Now Playing).
    struct StreamName {
        var application: String
        var pid: Int?
    }

    // MARK: - Session bus

    var bus: BusConnection?
    var players: SessionPlayers?
    var nowPlayingPlayer: NowPlayingPlayer?
    /// Armed only while the bus is gone, to connect again with backoff.
    var busRetry: MainLoop.Timer?
    var busRetryDelay: UInt64 = MediaState.firstRetry
    static let firstRetry: UInt64 = 500_000
    /// Whether the lack of a bus has been logged (once is enough).
    var reportedNoBus = false

    // MARK: - Streams and players

    var origins: [UInt32: StreamOrigin] = [:]
    /// The player each live stream is mapped to: what the engine was told.
    var streamPlayers: [UInt32: PlayerID] = [:]
    /// The last stream each player played, once ended (the engine may keep it as the app's Now Playing stream).
    var lastStreamOfPlayer: [PlayerID: StreamID] = [:]
    /// Names of recently ended streams, oldest first, bounded.
    var endedNames: [(StreamID, StreamName)] = []
    static let endedNamesKept = 32

    // MARK: - Now Playing

    /// The owner as last published, to publish only changes.
    var lastOwnerReport: StatusReport.Owner?
    var publishedOwner = false

    // MARK: - Hooks

    var claims: [ControlServer.ClientID: Claim] = [:]
    /// Subscribed connections and the event kinds each asked for.
    var subscribers: [ControlServer.ClientID: Set<ControlEvent.Kind>] = [:]
    /// The stream rows last sent to subscribers, by index or hook token.
    var reportedStreams: [String: StatusReport.Stream] = [:]
    /// The client whose request is being handled: its event lines wait until its reply is out.
    var replyingTo: ControlServer.ClientID?
    var heldBack: [ControlServer.ClientID: [String]] = [:]

    // MARK: - Deferred events

    /// Events to feed on the next loop iteration (found while carrying out commands, where feeding
    /// the engine again would interleave two decisions).
    var deferred: [Event] = []
    var deferTimer: MainLoop.Timer?
}

/// MPRIS: the session bus, the players on it, mapping them to streams, pausing and resuming them.
extension Daemon {
    // MARK: - The session bus

    /// Connects to the session bus (if there is one) and starts following players. Called once from `run`.
    func startPlayers() {
        media.deferTimer = MainLoop.Timer(loop: loop) { [unowned self] in self.feedDeferred() }
        media.busRetry = MainLoop.Timer(loop: loop) { [unowned self] in self.connectBus() }
        control?.onReplied = { [unowned self] client in self.replied(to: client) }
        connectBus()
    }

    private func connectBus() {
        guard !stopping else { return }
        let environment = ProcessInfo.processInfo.environment
        guard let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty else {
            if !media.reportedNoBus {
                log.info("no session bus (DBUS_SESSION_BUS_ADDRESS is not set): players are paused by fading and muting")
                media.reportedNoBus = true
            }
            return
        }
        do {
            let bus = try BusConnection(loop: loop, address: address) { [unowned self] result in
                self.busRegistered(result)
            }
            bus.onDisconnect = { [unowned self] in self.busLost("the bus closed the connection") }
            media.bus = bus
        } catch {
            retryBus(after: "\(error)")
        }
    }

    private func busRegistered(_ result: Result<String, BusError>) {
        guard let bus = media.bus else { return }
        switch result {
        case let .failure(error):
            busLost("Hello failed: \(error)")
        case let .success(name):
            media.busRetryDelay = MediaState.firstRetry
            media.reportedNoBus = false
            log.info("session bus: connected as \(name)")
            let players = SessionPlayers(bus: bus)
            players.onAppear = { [unowned self] player in self.playerAppeared(player) }
            players.onChange = { [unowned self] player, before in self.playerChanged(player, before: before) }
            players.onGone = { [unowned self] player in self.playerLeft(player) }
            players.onProblem = { [unowned self] text in self.log.debug("MPRIS: \(text)") }
            media.players = players
            players.start()
            let own = NowPlayingPlayer(bus: bus)
            own.onCommand = { [unowned self] method, arguments, reply in
                self.forwardToOwner(method, arguments, reply: reply)
            }
            own.ownerProperty = { [unowned self] name, reply in self.ownerProperty(name, reply: reply) }
            media.nowPlayingPlayer = own
            own.start { [unowned self] result in
                switch result {
                case .success: self.log.info("publishing Now Playing as \(MPRIS.ownName)")
                case let .failure(error): self.log.warning("cannot publish Now Playing as \(MPRIS.ownName): \(error)")
                }
                self.refreshNowPlaying()
            }
        }
    }

    /// The bus went away: its players went with it (their streams fall back to fade-and-mute).
    private func busLost(_ reason: String) {
        let known = media.players?.players.values.sorted { $0.busName < $1.busName } ?? []
        media.players = nil
        media.nowPlayingPlayer = nil
        media.bus = nil
        for player in known { playerLeft(player) }
        retryBus(after: reason)
    }

    private func retryBus(after reason: String) {
        guard !stopping else { return }
        let delay = media.busRetryDelay
        media.busRetryDelay = min(media.busRetryDelay * 2, 30_000_000)
        // A notice, not a warning: the session bus going away (the session ending, a test restarting
        // it) is no fault of ours, and nothing but MPRIS waits for it.
        log.notice("session bus: \(reason); trying again in \(delay / 1000) ms")
        media.busRetry?.schedule(after: delay)
    }

    // MARK: - Players

    private func playerAppeared(_ player: MPRISPlayer) {
        let pid = player.pid.map(String.init) ?? "?"
        log.info("player \(player.busName) appeared (\(player.identity ?? "?"), pid \(pid)): \(player.status?.rawValue ?? "status unknown")")
        publish(ControlEvent(event: .player, player: playerInfo(player, present: true)))
        remapStreams()
        refreshNowPlaying()
    }

    private func playerChanged(_ player: MPRISPlayer, before: MPRISPlayer) {
        if player.status != before.status, let status = player.status {
            log.info("player \(player.busName): \(status.rawValue)")
            publish(ControlEvent(event: .player, player: playerInfo(player, present: true)))
            for (index, mapped) in media.streamPlayers.sorted(by: { $0.key < $1.key }) where mapped == player.id {
                feed(.playback(Self.streamID(index), playing: status == .playing))
            }
        }
        refreshNowPlaying()
    }

    private func playerLeft(_ player: MPRISPlayer) {
        log.info("player \(player.busName) left the bus")
        media.lastStreamOfPlayer[player.id] = nil
        publish(ControlEvent(event: .player, player: playerInfo(player, present: false)))
        feed(.playerGone(player.id))
        remapStreams()
        refreshNowPlaying()
    }

    func playerInfo(_ player: MPRISPlayer, present: Bool) -> ControlEvent.Player {
        ControlEvent.Player(name: player.busName, identity: player.identity, pid: player.pid.map(Int.init),
                            status: player.status?.rawValue, present: present)
    }

    // MARK: - Mapping streams to players

    /// Players a stream may belong to, MPRIS players first (they win a tie with a hook's claim).
    private var candidates: [PlayerMatch.Candidate] {
        let bus = (media.players?.players.values.sorted { $0.busName < $1.busName } ?? []).map(\.candidate)
        let hooks = media.claims.values.sorted { $0.client < $1.client }
            .map { PlayerMatch.Candidate(player: $0.player, pid: $0.pid) }
        return bus + hooks
    }

    /// Reads where a new stream comes from and returns its player (for `streamStarted`).
    func playerForNewStream(_ input: SinkInput) -> PlayerID? {
        let all = candidates
        var origin = MediaState.StreamOrigin(pids: PlayerMatch.pids(in: input.properties), lineages: nil,
                                             appIDs: PlayerMatch.appIDs(in: input.properties))
        let player = all.isEmpty ? nil
            : PlayerMatch.player(lineages: origin.readLineages(), appIDs: origin.appIDs, among: all)
        media.origins[input.index] = origin
        media.streamPlayers[input.index] = player
        if let player { log.debug("stream \(input.index): played by \(player)") }
        return player
    }

    /// Maps every live stream again (a player or a claim came or went) and tells the engine of changes.
    func remapStreams() {
        let all = candidates
        for index in streams.keys.sorted() {
            guard var origin = media.origins[index] else { continue }
            let player = all.isEmpty ? nil
                : PlayerMatch.player(lineages: origin.readLineages(), appIDs: origin.appIDs, among: all)
            media.origins[index] = origin
            guard player != media.streamPlayers[index] else { continue }
            media.streamPlayers[index] = player
            log.info("stream \(index): \(player.map { "played by \($0)" } ?? "no player any more")")
            feed(.playerChanged(Self.streamID(index), player))
        }
    }

    /// A stream ended: forget its origin, remember who it was for a while.
    func streamForgotten(_ index: UInt32, input: SinkInput?) {
        let id = Self.streamID(index)
        media.origins[index] = nil
        if let player = media.streamPlayers.removeValue(forKey: index) { media.lastStreamOfPlayer[player] = id }
        if let input {
            let name = input.applicationName ?? input.processBinary ?? "stream \(index)"
            media.endedNames.append((id, MediaState.StreamName(
                application: name, pid: input.properties["application.process.id"].flatMap { Int($0) })))
            if media.endedNames.count > MediaState.endedNamesKept { media.endedNames.removeFirst() }
        }
    }

    // MARK: - Pause and resume

    /// Carries out the engine's `.pause` / `.resume` through the stream's player.
    func askPlayer(_ command: Command) {
        switch command {
        case let .pause(id, player):
            if let claim = claim(of: player) {
                sendToClaim(claim, ControlEvent(event: .pause, index: index(of: id), token: claim.token.rawValue))
                return
            }
            guard let players = media.players, let target = players.player(named: player.rawValue) else {
                log.warning("stream \(id): player \(player) is not on the bus; falling back to fade-and-mute")
                feedLater(.pauseIgnored(id))
                return
            }
            let method = target.canPause ? "Pause" : "Stop"
            log.info("stream \(id): \(method) \(target.busName)")
            players.call(target.busName, method: method) { [weak self] result in
                guard let self, case let .failure(error) = result else { return }
                self.log.warning("stream \(id): \(method) \(target.busName) failed (\(error)); falling back to fade-and-mute")
                self.feed(.pauseIgnored(id))
            }
            // Whether it then pauses is the engine's to judge (its `pause-timeout`): the player's
            // Paused, or the stream's cork, reaches it as `.playback`.
        case let .resume(id, player):
            if let claim = claim(of: player) {
                sendToClaim(claim, ControlEvent(event: .resume, index: index(of: id), token: claim.token.rawValue))
                return
            }
            guard let players = media.players, let target = players.player(named: player.rawValue) else {
                log.warning("stream \(id): player \(player) is not on the bus; cannot resume it")
                return
            }
            log.info("stream \(id): Play \(target.busName)")
            players.call(target.busName, method: "Play") { [weak self] result in
                guard case let .failure(error) = result else { return }
                self?.log.warning("stream \(id): Play \(target.busName) failed: \(error)")
            }
        default:
            break
        }
    }

    // MARK: - Deferred events

    /// Feeds `event` on the next loop iteration.
    func feedLater(_ event: Event) {
        media.deferred.append(event)
        media.deferTimer?.schedule(after: 0)
    }

    private func feedDeferred() {
        let events = media.deferred
        media.deferred = []
        for event in events { feed(event) }
    }
}
