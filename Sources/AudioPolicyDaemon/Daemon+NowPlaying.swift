import AudioPolicy
import ControlProtocol
import FoundationEssentials
import Glibc
import Logging
import SessionBus
import SoundServer

/// Now Playing: who owns it (the engine decides), what `status` and `now-playing` show, and our own
/// MPRIS player that mirrors the owner and forwards remote commands to it.
extension Daemon {
    /// The engine named a new owner (`.nowPlaying`).
    func nowPlayingChanged(_ id: StreamID?) {
        let report = nowPlayingReport()
        log.info("now playing: \(report.map(Self.describe) ?? "nobody")")
        refreshNowPlaying()
    }

    /// The player that takes commands for `id` (a stream, or a claim's token), if any: the stream's
    /// player while it plays, its last player after it ended, the claiming connection for a claim.
    func player(standingFor id: StreamID) -> PlayerID? {
        if let claim = media.claims.values.first(where: { $0.token == id }) { return claim.player }
        if let index = index(of: id) { return media.streamPlayers[index] }
        return media.lastStreamOfPlayer.first { $0.value == id }?.key
    }

    /// The owner as `status` and `now-playing` show it.
    func nowPlayingReport() -> StatusReport.Owner? {
        guard let id = engine.nowPlayingOwner else { return nil }
        var owner: StatusReport.Owner
        if let claim = media.claims.values.first(where: { $0.token == id }) {
            owner = StatusReport.Owner(application: claim.application, pid: claim.pid.map(Int.init), index: nil)
            owner.identity = claim.application
            owner.playbackStatus = claim.status?.rawValue
            owner.claim = claim.token.rawValue
        } else if let index = index(of: id), let live = streams[index] {
            owner = StatusReport.Owner(
                application: live.input.applicationName ?? live.input.processBinary ?? "stream \(index)",
                pid: live.input.properties["application.process.id"].flatMap { Int($0) }, index: index)
        } else if let name = media.endedNames.last(where: { $0.0 == id })?.1 {
            owner = StatusReport.Owner(application: name.application, pid: name.pid, index: nil)
        } else {
            owner = StatusReport.Owner(application: id.rawValue, pid: nil, index: nil)
        }
        if let player = player(standingFor: id), let target = media.players?.player(named: player.rawValue) {
            owner.player = target.busName
            owner.identity = target.identity
            owner.playbackStatus = target.status?.rawValue
            owner.title = target.title
            owner.artist = target.artist
        }
        owner.stream = id.rawValue
        return owner
    }

    static func describe(_ owner: StatusReport.Owner) -> String {
        var text = owner.application
        if let pid = owner.pid { text += " (pid \(pid))" }
        if let player = owner.player { text += " through \(player)" }
        if let claim = owner.claim { text += " (claimed: \(claim))" }
        return text
    }

    /// Publishes a changed owner to subscribers and shows the owner's state on our MPRIS player.
    func refreshNowPlaying() {
        let report = nowPlayingReport()
        if !media.publishedOwner || report != media.lastOwnerReport {
            media.publishedOwner = true
            media.lastOwnerReport = report
            publish(ControlEvent(event: .nowPlaying, nowPlaying: report))
        }
        media.nowPlayingPlayer?.update(nowPlayingState())
    }

    private func nowPlayingState() -> NowPlayingPlayer.State {
        var state = NowPlayingPlayer.State()
        guard let id = engine.nowPlayingOwner else { return state }
        let player = player(standingFor: id)
        if let player, let claim = claim(of: player) {
            // A claim says "I am playing"; the hook corrects that with `playback`.
            state.status = claim.status ?? .playing
            state.metadata = Self.placeholderMetadata(title: claim.application)
            state.canPlay = true
            state.canPause = true
            state.canGoNext = true
            state.canGoPrevious = true
        } else if let player, let target = media.players?.player(named: player.rawValue) {
            state.status = target.status ?? .stopped
            state.metadata = target.metadata
            state.canPlay = target.canPlay
            state.canPause = target.canPause
            state.canGoNext = target.canGoNext
            state.canGoPrevious = target.canGoPrevious
            state.canSeek = target.canSeek
        } else {
            // An app without a player: its stream's state, and nothing to control.
            switch engine.state(of: id, at: now) {
            case .playing?, .ducked?: state.status = .playing
            case .paused?: state.status = .paused
            default: state.status = .stopped
            }
            state.metadata = Self.placeholderMetadata(title: nowPlayingReport()?.application ?? id.rawValue)
        }
        return state
    }

    private static func placeholderMetadata(title: String) -> [String: BusValue] {
        ["mpris:trackid": .objectPath("/org/mpris/MediaPlayer2/TrackList/NoTrack"), "xesam:title": .string(title)]
    }

    /// A remote command reached our MPRIS player: it goes to the owner's player (or claiming hook).
    func forwardToOwner(_ method: String, _ arguments: [BusValue],
                        reply: @escaping (Result<[BusValue], BusError>) -> Void) {
        guard let id = engine.nowPlayingOwner else {
            log.info("now playing: \(method) asked, but nothing owns Now Playing")
            return reply(.failure(.reply(name: NowPlayingPlayer.noOwner, text: "nothing owns Now Playing")))
        }
        let player = player(standingFor: id)
        if let player, let claim = claim(of: player) {
            log.info("now playing: \(method) -> \(claim.application) (claim \(claim.token))")
            sendToClaim(claim, ControlEvent(event: .command, command: method, token: claim.token.rawValue))
            return reply(.success([]))
        }
        if let player, let players = media.players, let target = players.player(named: player.rawValue) {
            log.info("now playing: \(method) -> \(target.busName)")
            return players.call(target.busName, method: method, arguments, reply: reply)
        }
        let name = nowPlayingReport()?.application ?? id.rawValue
        log.info("now playing: \(method) asked, but \(name) has no player to control")
        reply(.failure(.reply(name: NowPlayingPlayer.noOwner,
                              text: "\(name) owns Now Playing but has no player to control")))
    }

    /// Reads a property the owner's player does not signal (`Position`).
    func ownerProperty(_ name: String, reply: @escaping (Result<[BusValue], BusError>) -> Void) {
        guard let id = engine.nowPlayingOwner, let player = player(standingFor: id), let bus = media.bus,
              let target = media.players?.player(named: player.rawValue) else {
            return reply(.success([.variant(.int64(0))]))
        }
        bus.call(target.busName, path: MPRIS.path, interface: MPRIS.propertiesInterface, method: "Get",
                 [.string(MPRIS.playerInterface), .string(name)], timeout: 2000, reply: reply)
    }
}
