extension Engine {
    /// How far back ``prelude(at:)`` dates a stream's start: further back changes no timing a policy
    /// has (graces, releases and holds are seconds), and a recording of a long session would open with
    /// hours of nothing.
    public static let preludeHorizon: Milliseconds = 30_000

    /// The events, each with its time, that bring a fresh engine to the streams this one knows at `now`:
    /// each live stream's start at the time it started (at most ``preludeHorizon`` ago; a hook's
    /// interruption for a hook) and the output it plays on, then what was reported of it since — found silent, paused by its
    /// player or the user, muted by the user, held muted for a lost output — and every live microphone capture.
    ///
    /// Why: `audio-policyd record` joins a session that is already going; its fixture opens with these
    /// so that the replay has the same streams, with the same grace left, to act on. Earlier history
    /// is not replayed (what a stream was ducked or paused by before), and neither are claims, the
    /// user's volumes (a replay starts every stream at the user's level, which a factor is relative to)
    /// or pending meters.
    public func prelude(at now: Milliseconds) -> [(at: Milliseconds, event: Event)] {
        let earliest = now - Self.preludeHorizon
        var events: [(at: Milliseconds, event: Event)] = []
        for (id, capture) in captures.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            events.append((earliest, .capture(id, capture.properties)))
        }
        for (id, output) in outputs.sorted(by: { $0.key < $1.key }) {
            events.append((earliest, .output(id, output)))
        }
        for stream in streams.values where stream.isLive {
            let started = min(now, max(earliest, stream.startedAt))
            // A capture's interruption comes back with its capture (above).
            if stream.isHook, captures[stream.id] != nil { continue }
            if stream.isHook {
                events.append((started, .interruptionBegan(token: stream.id, className: stream.interruptionClass.name,
                                                           stream.properties)))
                continue
            }
            events.append((started, .streamStarted(stream.id, stream.properties, player: stream.player,
                                                   playing: stream.hasPlayed, muted: stream.userMuted,
                                                   held: stream.outputLoss?.phase == .held, output: stream.output)))
            if !stream.audibility.audible {
                if stream.audibility.heard { events.append((started, .audibility(stream.id, audible: true))) }
                events.append((stream.audibility.heard ? now : started, .audibility(stream.id, audible: false)))
            }
            if !stream.playing { events.append((now, .playback(stream.id, playing: false))) }
        }
        return events.sorted { $0.at < $1.at }
    }
}
