import AudioPolicy
import ControlProtocol
import Logging
import SessionBus

/// Carrying out the engine's pauses and resumes, and media keys for Now Playing: over MPRIS, or as an
/// event line to a claiming hook.
extension MediaPlayers {
    /// Asks the player behind a `.pause` or `.resume` to do it. `index` is the stream's sink input, told
    /// to a hook so it knows which of its streams is meant.
    func ask(_ command: Command, stream index: UInt32?) {
        switch command {
        case let .pause(id, player):
            if let claim = claim(of: player) {
                outbox.send(ControlEvent(event: .pause, index: index, token: claim.token.rawValue), to: claim.client)
                return
            }
            guard let players, let name = player.busName, let target = players.player(named: name) else {
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
                outbox.send(ControlEvent(event: .resume, index: index, token: claim.token.rawValue), to: claim.client)
                return
            }
            guard let players, let name = player.busName, let target = players.player(named: name) else {
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

    /// Sends a remote command (`PlayPause`, `Next`, …) that reached our own MPRIS player to `player`.
    /// Returns false, without replying, when `player` is neither a claim nor on the bus.
    func command(_ method: String, _ arguments: [BusValue], to player: PlayerID,
                 reply: @escaping (Result<[BusValue], BusError>) -> Void) -> Bool {
        if let claim = claim(of: player) {
            log.info("now playing: \(method) -> \(claim.application) (claim \(claim.token))")
            outbox.send(ControlEvent(event: .command, command: method, token: claim.token.rawValue), to: claim.client)
            reply(.success([]))
            return true
        }
        guard let players, let name = player.busName, let target = players.player(named: name) else { return false }
        log.info("now playing: \(method) -> \(target.busName)")
        players.call(target.busName, method: method, arguments, reply: reply)
        return true
    }
}
