import AudioPolicy
import ControlProtocol
import EventLoop
import FoundationEssentials
import Logging
import SessionBus

/// The media players the daemon can pause, resume and name as Now Playing: MPRIS players on the session
/// bus and hooks that claimed Now Playing on the control socket, and which stream each plays.
///
/// Intake and actuation for players at once, as the sound server is for streams: what players say
/// (Playing, Paused, gone) becomes engine events through ``feed``; the engine's pauses and resumes
/// are carried out with ``ask(_:stream:)``. Touched only on the loop's thread.
final class MediaPlayers {
    let loop: MainLoop
    var log: Logger
    let outbox: ControlOutbox

    /// Tells the engine what a player did (``Daemon/feed(_:)``).
    var feed: (Event) -> Void = { _ in }
    /// The same, on the next turn of the loop (found while carrying out commands).
    var feedLater: (Event) -> Void = { _ in }
    /// A player appeared, changed or left: for `player` subscribers.
    var onPlayerEvent: (ControlEvent.Player) -> Void = { _ in }
    /// What Now Playing shows may have changed (a player's status or metadata, a claim).
    var onChange: () -> Void = {}
    /// The bus connection came (registered) or went: our own Now Playing player lives on it.
    var onBus: (BusConnection?) -> Void = { _ in }

    // MARK: The session bus

    private(set) var bus: BusConnection?
    private(set) var players: SessionPlayers?
    /// Armed only while the bus is gone, to connect again with backoff.
    private var busRetry: MainLoop.Timer?
    private var busRetryDelay: UInt64 = MediaPlayers.firstRetry
    private static let firstRetry: UInt64 = 500_000
    /// Whether the lack of a bus has been logged (once is enough).
    private var reportedNoBus = false
    private var stopped = false

    // MARK: Streams and their players

    /// Every live stream's record: where each comes from, and its player, are the players' part of it
    /// (``LiveStream/origin``).
    let streams: LiveStreams
    /// The last stream each player played, once ended (the engine may keep it as the app's Now Playing stream).
    var lastStreamOfPlayer: [PlayerID: StreamID] = [:]
    /// Hooks that claimed Now Playing, by connection.
    var claims: [ControlServer.ClientID: PlayerClaim] = [:]

    init(loop: MainLoop, log: Logger, streams: LiveStreams, outbox: ControlOutbox) {
        self.loop = loop
        self.streams = streams
        self.log = log
        self.outbox = outbox
    }

    // MARK: - The session bus

    /// Connects to the session bus, if there is one, and follows its players.
    func start() {
        busRetry = MainLoop.Timer(loop: loop) { [unowned self] in self.connectBus() }
        connectBus()
    }

    /// No more reconnecting: the daemon is stopping.
    func stop() {
        stopped = true
        busRetry?.cancel()
    }

    /// Leaves the bus without trying again (a daemon under test on a fake server).
    func leaveBus() {
        stop()
        players = nil
        bus = nil
        onBus(nil)
    }

    private func connectBus() {
        guard !stopped else { return }
        let environment = ProcessInfo.processInfo.environment
        guard let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty else {
            if !reportedNoBus {
                log.info("no session bus (DBUS_SESSION_BUS_ADDRESS is not set): players are paused by fading and muting")
                reportedNoBus = true
            }
            return
        }
        do {
            let bus = try BusConnection(loop: loop, address: address) { [unowned self] result in
                self.busRegistered(result)
            }
            bus.onDisconnect = { [unowned self] in self.busLost("the bus closed the connection") }
            self.bus = bus
        } catch {
            retryBus(after: "\(error)")
        }
    }

    private func busRegistered(_ result: Result<String, BusError>) {
        guard let bus else { return }
        switch result {
        case let .failure(error):
            busLost("Hello failed: \(error)")
        case let .success(name):
            busRetryDelay = Self.firstRetry
            reportedNoBus = false
            log.info("session bus: connected as \(name)")
            let players = SessionPlayers(bus: bus)
            players.onAppear = { [unowned self] player in self.playerAppeared(player) }
            players.onChange = { [unowned self] player, before in self.playerChanged(player, before: before) }
            players.onGone = { [unowned self] player in self.playerLeft(player) }
            players.onProblem = { [unowned self] text in self.log.debug("MPRIS: \(text)") }
            self.players = players
            players.start()
            onBus(bus)
        }
    }

    /// The bus went away: its players went with it (their streams fall back to fade-and-mute).
    private func busLost(_ reason: String) {
        let known = players?.players.values.sorted { $0.busName < $1.busName } ?? []
        players = nil
        bus = nil
        onBus(nil)
        for player in known { playerLeft(player) }
        retryBus(after: reason)
    }

    private func retryBus(after reason: String) {
        guard !stopped else { return }
        let delay = busRetryDelay
        busRetryDelay = min(busRetryDelay * 2, 30_000_000)
        // A notice, not a warning: the session bus going away (the session ending, a test restarting
        // it) is no fault of ours, and nothing but MPRIS waits for it.
        log.notice("session bus: \(reason); trying again in \(delay / 1000) ms")
        busRetry?.schedule(after: delay)
    }

    // MARK: - Players

    /// The MPRIS player on the bus with this engine name, if it is there.
    func busPlayer(_ player: PlayerID) -> MPRISPlayer? {
        player.busName.flatMap { players?.player(named: $0) }
    }

    /// Every MPRIS player on the bus, by bus name.
    var busPlayers: [MPRISPlayer] {
        players?.players.values.sorted { $0.busName < $1.busName } ?? []
    }

    private func playerAppeared(_ player: MPRISPlayer) {
        let pid = player.pid.map(String.init) ?? "?"
        log.info("player \(player.busName) appeared (\(player.identity ?? "?"), pid \(pid)): \(player.status?.rawValue ?? "status unknown")")
        onPlayerEvent(Self.info(player, present: true))
        // What it says first: a player that says it plays nothing makes no stream media (a browser's
        // player left on the bus after its page's song ended).
        feed(.playerStatus(player.id, Self.status(of: player)))
        remapStreams()
        onChange()
    }

    private func playerChanged(_ player: MPRISPlayer, before: MPRISPlayer) {
        let said = Self.status(of: player)
        if said != Self.status(of: before) { feed(.playerStatus(player.id, said)) }
        if player.status != before.status, let status = player.status {
            log.info("player \(player.busName): \(status.rawValue)")
            onPlayerEvent(Self.info(player, present: true))
            feedPlayback(of: player.id, playing: status == .playing)
        }
        onChange()
    }

    private func playerLeft(_ player: MPRISPlayer) {
        log.info("player \(player.busName) left the bus")
        lastStreamOfPlayer[player.id] = nil
        onPlayerEvent(Self.info(player, present: false))
        feed(.playerGone(player.id))
        remapStreams()
        onChange()
    }

    /// Tells the engine that every stream `player` plays is playing or not.
    func feedPlayback(of player: PlayerID, playing: Bool) {
        for index in streams.indexes {
            guard let live = streams[index], live.origin.player == player else { continue }
            feed(.playback(live.id, playing: playing))
        }
    }

    /// What `player` says of itself, in the engine's terms: `Playing` counts only with metadata (something
    /// it names as playing).
    static func status(of player: MPRISPlayer) -> PlayerStatus {
        switch player.status {
        case .playing: player.metadata.isEmpty ? .quiet : .playing
        case .paused: .paused
        case .stopped: .stopped
        case nil: .quiet
        }
    }

    /// A player as `player` event lines show it.
    static func info(_ player: MPRISPlayer, present: Bool) -> ControlEvent.Player {
        ControlEvent.Player(name: player.busName, identity: player.identity, pid: player.pid.map(Int.init),
                            status: player.status?.rawValue, present: present)
    }
}
