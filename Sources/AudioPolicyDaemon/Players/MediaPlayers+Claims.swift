import AudioPolicy
import ControlProtocol
import Logging
import SessionBus

/// Hooks as players: a control connection claims Now Playing, reports its playback state, and ends
/// its claim (or goes away).
extension MediaPlayers {
    /// Records `client`'s claim (a second claim replaces the first, keeping its reported state) and
    /// tells the engine.
    func claim(by client: ControlServer.ClientID, pid: Int32?, application: String, properties: Properties)
        -> PlayerClaim {
        let claim = PlayerClaim(client: client, token: StreamID(.claim(client: client)),
                                player: PlayerID(.hook(client: client)), pid: pid, application: application,
                                status: claims[client]?.status)
        claims[client] = claim
        log.info("control client \(client): \(application) claims Now Playing (\(claim.token))")
        feed(.nowPlayingClaimed(claim.token, properties, player: claim.player))
        remapStreams()
        onChange()
        return claim
    }

    /// The claiming hook says it is playing, paused or stopped.
    func claimStatus(of client: ControlServer.ClientID, _ status: MPRISPlayer.Status) {
        guard var claim = claims[client] else { return }
        claim.status = status
        claims[client] = claim
        feedPlayback(of: claim.player, playing: status == .playing)
        onChange()
    }

    /// Ends the claim `client` made, if any (on `end` with its token, or when the connection closes).
    func endClaim(of client: ControlServer.ClientID) {
        guard let claim = claims.removeValue(forKey: client) else { return }
        log.info("control client \(client): claim \(claim.token) ended")
        feed(.playerGone(claim.player))
        remapStreams()
        onChange()
    }

    /// The claim behind an engine player name, if it is a hook's.
    func claim(of player: PlayerID) -> PlayerClaim? {
        claims.values.first { $0.player == player }
    }

    /// The claim behind an engine stream name (a claim's token), if it is one.
    func claim(token id: StreamID) -> PlayerClaim? {
        claims.values.first { $0.token == id }
    }
}
