import AudioPolicy
import Logging
import PulseBackend
import SessionBus
import SoundBackend

/// Which player plays each stream: found when the stream starts, again whenever a player or a claim
/// comes or goes.
extension MediaPlayers {
    /// Players a stream may belong to, MPRIS players first (they win a tie with a hook's claim).
    private var candidates: [PlayerMatch.Candidate] {
        let hooks = claims.values.sorted { $0.client < $1.client }
            .map { PlayerMatch.Candidate(player: $0.player, pid: $0.pid) }
        return busPlayers.map(\.candidate) + hooks
    }

    /// Reads where a new stream comes from and returns its player (for `streamStarted`).
    func playerForNewStream(_ input: SinkInput, id: StreamID) -> PlayerID? {
        let all = candidates
        var origin = StreamOrigin(id, input.properties)
        let player = all.isEmpty ? nil
            : PlayerMatch.player(lineages: origin.readLineages(), appIDs: origin.appIDs, sandboxPID: origin.sandboxPID,
                                     among: all)
        origin.player = player
        origins[input.index] = origin
        if let player { log.debug("stream \(input.index): played by \(player)") }
        return player
    }

    /// Whether the player of a new stream already says Playing (a new track's stream).
    func isPlaying(_ index: UInt32) -> Bool {
        guard let player = origins[index]?.player else { return false }
        return busPlayer(player)?.status == .playing
    }

    /// Maps every live stream again (a player or a claim came or went) and tells the engine of changes.
    func remapStreams() {
        let all = candidates
        for index in origins.keys.sorted() {
            guard var origin = origins[index] else { continue }
            let player = all.isEmpty ? nil
                : PlayerMatch.player(lineages: origin.readLineages(), appIDs: origin.appIDs, sandboxPID: origin.sandboxPID,
                                     among: all)
            let changed = player != origin.player
            origin.player = player
            origins[index] = origin
            guard changed else { continue }
            log.info("stream \(index): \(player.map { "played by \($0)" } ?? "no player any more")")
            feed(.playerChanged(origin.id, player))
        }
    }

    /// A stream ended: its player is remembered as the player it last played for.
    func streamEnded(_ index: UInt32) {
        if let origin = origins.removeValue(forKey: index), let player = origin.player {
            lastStreamOfPlayer[player] = origin.id
        }
    }

    /// The player that takes commands for `id` (a stream, or a claim's token), if any: the stream's
    /// player while it plays, its last player after it ended, the claiming connection for a claim.
    func player(standingFor id: StreamID) -> PlayerID? {
        if let claim = claims.values.first(where: { $0.token == id }) { return claim.player }
        if let index = id.playbackIndex, let origin = origins[index], origin.id == id { return origin.player }
        return lastStreamOfPlayer.first { $0.value == id }?.key
    }
}
