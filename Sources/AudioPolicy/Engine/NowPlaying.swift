/// The Now Playing owner: the app whose primary audio most recently started (or whose player most
/// recently reported Playing). Apps are kept in order of activity, like playerctld, so that when the
/// owner goes away the previous one takes over.
struct NowPlaying: Hashable, Sendable {
    /// Apps, least recently active first; the last one owns Now Playing.
    private var apps: [String] = []
    /// The stream that stands for each app (its most recent primary stream).
    private var streams: [String: StreamID] = [:]

    var owner: StreamID? { apps.last.flatMap { streams[$0] } }

    mutating func take(app: String, stream: StreamID) {
        apps.removeAll { $0 == app }
        apps.append(app)
        streams[app] = stream
    }

    /// The app is gone (its last stream ended and it has no player to come back with).
    mutating func remove(app: String) {
        apps.removeAll { $0 == app }
        streams[app] = nil
    }

    func contains(app: String) -> Bool { streams[app] != nil }
}
