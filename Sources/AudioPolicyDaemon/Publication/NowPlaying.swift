import AudioPolicy
import ControlProtocol
import Logging
import SessionBus
import SoundBackend

/// Now Playing as the desktop sees it: who owns it (the engine decides), what `status` and `now-playing`
/// show, and our own MPRIS player, which mirrors the owner and forwards media keys to it.
final class NowPlaying {
    /// Who a stream was, kept a while after it ended (the engine may still name it as Now Playing).
    private struct EndedStream {
        var id: StreamID
        var application: String
        var pid: Int?
        var appID: String?
    }

    var log: Logger
    private let clock: DaemonClock
    private unowned let reading: any EngineReading
    private let actuation: Actuation
    private let players: MediaPlayers
    /// Sends an event line to subscribers (``Publication/publish(_:)``).
    var publish: (ControlEvent) -> Void = { _ in }

    /// Where our player is published (``NowPlayingName``: by default outside the MPRIS namespace, so no
    /// desktop shows it as a second card).
    var publishedName = NowPlayingName.own
    /// Our player, while there is a bus and a name to publish it under.
    private var ownPlayer: NowPlayingPlayer?
    /// The owner as last published, to publish only changes.
    private var lastReport: StatusReport.Owner?
    private var publishedOnce = false
    /// Recently ended streams, oldest first, bounded.
    private var ended: [EndedStream] = []
    private static let endedKept = 32

    init(log: Logger, clock: DaemonClock, reading: any EngineReading, actuation: Actuation, players: MediaPlayers) {
        self.log = log
        self.clock = clock
        self.reading = reading
        self.actuation = actuation
        self.players = players
    }

    /// The session bus came or went: our player is published on it, or gone with it.
    func busChanged(_ bus: BusConnection?) {
        guard let bus, let name = publishedName.busName else {
            ownPlayer = nil
            return
        }
        let own = NowPlayingPlayer(bus: bus, name: name)
        own.onCommand = { [unowned self] method, arguments, reply in self.forwardToOwner(method, arguments, reply: reply) }
        own.ownerProperty = { [unowned self] name, reply in self.ownerProperty(name, reply: reply) }
        ownPlayer = own
        own.start { [unowned self] result in
            switch result {
            case .success: self.log.info("publishing Now Playing as \(name)")
            case let .failure(error): self.log.warning("cannot publish Now Playing as \(name): \(error)")
            }
            self.refresh()
        }
    }

    /// A sink input ended: who it was is kept for a while.
    func streamEnded(_ input: SinkInput, id: StreamID) {
        ended.append(EndedStream(id: id, application: AppName.forPeople(input.properties, id: id), pid: input.processID,
                                 appID: input.properties[SandboxedStreams.appIDKey]))
        if ended.count > Self.endedKept { ended.removeFirst() }
    }

    /// The engine named a new owner (`.nowPlaying`).
    func ownerChanged() {
        log.info("now playing: \(report().map(Self.describe) ?? "nobody")")
        refresh()
    }

    /// Publishes a changed owner to subscribers and shows the owner's state on our MPRIS player.
    func refresh() {
        let report = report()
        if !publishedOnce || report != lastReport {
            publishedOnce = true
            lastReport = report
            publish(ControlEvent(event: .nowPlaying, nowPlaying: report))
        }
        ownPlayer?.update(state())
    }

    /// The owner as `status` and `now-playing` show it.
    func report() -> StatusReport.Owner? {
        guard let id = reading.engine.nowPlayingOwner else { return nil }
        var owner: StatusReport.Owner
        if let claim = players.claim(token: id) {
            owner = StatusReport.Owner(application: claim.application, pid: claim.pid.map(Int.init), index: nil)
            owner.identity = claim.application
            owner.playbackStatus = claim.status?.rawValue
            owner.claim = claim.token.rawValue
        } else if let index = actuation.index(of: id), let live = actuation.streams[index] {
            owner = StatusReport.Owner(application: AppName.forPeople(live.input.properties, id: id),
                                       pid: live.input.processID, index: index)
            owner.appID = live.input.properties[SandboxedStreams.appIDKey]
        } else if let name = ended.last(where: { $0.id == id }) {
            owner = StatusReport.Owner(application: name.application, pid: name.pid, index: nil)
            owner.appID = name.appID
        } else {
            owner = StatusReport.Owner(application: id.rawValue, pid: nil, index: nil)
        }
        if let player = players.player(standingFor: id), let target = players.busPlayer(player) {
            owner.player = target.busName
            owner.identity = target.identity
            owner.playbackStatus = target.status?.rawValue
            owner.title = target.title
            owner.artist = target.artist
        }
        owner.stream = id.rawValue
        return owner
    }

    private static func describe(_ owner: StatusReport.Owner) -> String {
        var text = StatusReport.label(application: owner.application, appID: owner.appID)
        if let pid = owner.pid { text += " (pid \(pid))" }
        if let player = owner.player { text += " through \(player)" }
        if let claim = owner.claim { text += " (claimed: \(claim))" }
        return text
    }

    private func state() -> NowPlayingPlayer.State {
        var state = NowPlayingPlayer.State()
        let engine = reading.engine
        guard let id = engine.nowPlayingOwner else { return state }
        let player = players.player(standingFor: id)
        if let player, let claim = players.claim(of: player) {
            // A claim says "I am playing"; the hook corrects that with `playback`.
            state.status = claim.status ?? .playing
            state.metadata = Self.placeholderMetadata(title: claim.application)
            state.canPlay = true
            state.canPause = true
            state.canGoNext = true
            state.canGoPrevious = true
        } else if let player, let target = players.busPlayer(player) {
            state.status = target.status ?? .stopped
            state.metadata = target.metadata
            state.canPlay = target.canPlay
            state.canPause = target.canPause
            state.canGoNext = target.canGoNext
            state.canGoPrevious = target.canGoPrevious
            state.canSeek = target.canSeek
        } else {
            // An app without a player: its stream's state, and nothing to control.
            switch engine.state(of: id, at: clock.now) {
            case .playing?, .ducked?: state.status = .playing
            case .paused?: state.status = .paused
            default: state.status = .stopped
            }
            state.metadata = Self.placeholderMetadata(title: report()?.application ?? id.rawValue)
        }
        return state
    }

    private static func placeholderMetadata(title: String) -> [String: BusValue] {
        ["mpris:trackid": .objectPath("/org/mpris/MediaPlayer2/TrackList/NoTrack"), "xesam:title": .string(title)]
    }

    // MARK: - Media keys

    /// A remote command reached our MPRIS player: it goes to the owner's player (or claiming hook).
    private func forwardToOwner(_ method: String, _ arguments: [BusValue],
                                reply: @escaping (Result<[BusValue], BusError>) -> Void) {
        guard let id = reading.engine.nowPlayingOwner else {
            log.info("now playing: \(method) asked, but nothing owns Now Playing")
            return reply(.failure(.reply(name: NowPlayingPlayer.noOwner, text: "nothing owns Now Playing")))
        }
        if let player = players.player(standingFor: id), players.command(method, arguments, to: player, reply: reply) {
            return
        }
        let name = report()?.application ?? id.rawValue
        log.info("now playing: \(method) asked, but \(name) has no player to control")
        reply(.failure(.reply(name: NowPlayingPlayer.noOwner,
                              text: "\(name) owns Now Playing but has no player to control")))
    }

    /// A media key from the control socket (`{"op":"command"}`, `audio-policyd now-playing --send`): sent to
    /// the owner's player or claiming hook as our bus player would send it. Returns whom it went to, or why
    /// it could not go; the player's own answer is only logged (the control socket replies at once).
    func send(_ method: String) -> Result<String, NowPlayingRefusal> {
        guard NowPlayingPlayer.forwarded.contains(method) else {
            return .failure(NowPlayingRefusal(description: "unknown command \"\(method)\"; known: "
                + NowPlayingPlayer.forwarded.sorted().joined(separator: ", ")))
        }
        guard let id = reading.engine.nowPlayingOwner, let owner = report() else {
            return .failure(NowPlayingRefusal(description: "nothing owns Now Playing"))
        }
        guard let player = players.player(standingFor: id),
              players.command(method, [], to: player, reply: { [weak self] result in
                  if case let .failure(error) = result { self?.log.info("now playing: \(method) to \(owner.application): \(error)") }
              }) else {
            return .failure(NowPlayingRefusal(description: "\(owner.application) owns Now Playing but has no player to control"))
        }
        return .success(owner.player ?? owner.claim.map { "the hook that claimed it (\($0))" } ?? owner.application)
    }

    /// Reads a property the owner's player does not signal (`Position`).
    private func ownerProperty(_ name: String, reply: @escaping (Result<[BusValue], BusError>) -> Void) {
        guard let id = reading.engine.nowPlayingOwner, let player = players.player(standingFor: id),
              let bus = players.bus, let target = players.busPlayer(player) else {
            return reply(.success([.variant(.int64(0))]))
        }
        bus.call(target.busName, path: MPRIS.path, interface: MPRIS.propertiesInterface, method: "Get",
                 [.string(MPRIS.playerInterface), .string(name)], timeout: 2000, reply: reply)
    }
}

/// Why a media key from the control socket could not be sent.
struct NowPlayingRefusal: Error, CustomStringConvertible {
    var description: String
}
