import AudioPolicy
import Logging
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
    func playerForNewStream(_ index: UInt32) -> PlayerID? {
        let all = candidates
        let player = all.isEmpty ? nil : streams.update(index) { live in
            PlayerMatch.player(lineages: live.origin.readLineages(), appIDs: live.origin.appIDs,
                               sandboxPID: live.origin.sandboxPID, among: all)
        } ?? nil
        streams.update(index) { $0.origin.player = player }
        if let player { log.debug("stream \(index): played by \(player)") }
        return player
    }

    /// Whether the player of a new stream already says Playing (a new track's stream).
    func isPlaying(_ index: UInt32) -> Bool {
        guard let player = streams[index]?.origin.player else { return false }
        return busPlayer(player)?.status == .playing
    }

    /// Maps every live stream again (a player or a claim came or went) and tells the engine of changes.
    func remapStreams() {
        let all = candidates
        for index in streams.indexes {
            guard let (id, player, changed) = streams.update(index, { live in
                let player = all.isEmpty ? nil
                    : PlayerMatch.player(lineages: live.origin.readLineages(), appIDs: live.origin.appIDs,
                                         sandboxPID: live.origin.sandboxPID, among: all)
                defer { live.origin.player = player }
                return (live.id, player, player != live.origin.player)
            }), changed else { continue }
            log.info("stream \(index): \(player.map { "played by \($0)" } ?? "no player any more")")
            feed(.playerChanged(id, player))
        }
    }

    /// A stream is ending (its record still there): its player is remembered as the player it last
    /// played for.
    func streamEnded(_ index: UInt32) {
        if let live = streams[index], let player = live.origin.player {
            lastStreamOfPlayer[player] = live.id
        }
    }

    /// The player that takes commands for `id` (a stream, or a claim's token), if any: the stream's
    /// player while it plays, its last player after it ended, the claiming connection for a claim.
    func player(standingFor id: StreamID) -> PlayerID? {
        if let claim = claims.values.first(where: { $0.token == id }) { return claim.player }
        if let index = streams.index(of: id) { return streams[index]?.origin.player }
        return lastStreamOfPlayer.first { $0.value == id }?.key
    }
}
