/// The Now Playing owner: the app whose primary audio most recently started (or whose player most
/// recently reported Playing). Apps are kept in order of activity, like playerctld, so that when the
/// owner goes away the previous one takes over.
struct NowPlaying: Hashable, Sendable {
    /// Apps, least recently active first; the last one owns Now Playing.
    private var apps: [String] = []
    /// The stream that stands for each app (its most recent primary stream).
    private var streams: [String: StreamID] = [:]
    /// Each app's player, so the app can be dropped when its player leaves the bus.
    private var players: [String: PlayerID] = [:]

    var owner: StreamID? { apps.last.flatMap { streams[$0] } }
    /// The app that owns Now Playing (a hook's claim included).
    var ownerApp: String? { apps.last }

    mutating func take(app: String, stream: StreamID, player: PlayerID?) {
        apps.removeAll { $0 == app }
        apps.append(app)
        streams[app] = stream
        players[app] = player ?? players[app]
    }

    /// A new stream of an app already known here stands for it from now on, without reordering: an app
    /// that makes a new stream per track (mpv) or per play (Telegram) keeps its place.
    mutating func follow(app: String, stream: StreamID) {
        if streams[app] != nil { streams[app] = stream }
    }

    /// The app of this player quit.
    mutating func remove(player: PlayerID) {
        for (app, candidate) in players where candidate == player { remove(app: app) }
    }

    /// The app that `stream` stands for can no longer hold Now Playing (whatever app name it was taken
    /// under: a stream's properties, and so its app, may have changed since).
    mutating func remove(stream: StreamID) {
        for (app, candidate) in streams where candidate == stream { remove(app: app) }
    }

    /// The app is gone (its last stream ended and it has no player to come back with).
    mutating func remove(app: String) {
        apps.removeAll { $0 == app }
        streams[app] = nil
        players[app] = nil
    }

    func contains(app: String) -> Bool { streams[app] != nil }
}
