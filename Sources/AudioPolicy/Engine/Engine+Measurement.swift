/// Which streams' sound is measured: only those whose audibility can change a decision, so that music
/// playing alone (or anything nothing depends on) costs the shell no meter and the daemon no wake-ups.
extension Engine {
    /// Asks the shell to start or stop measuring streams, after a decision changed who matters.
    mutating func updateMeasurements(now: Milliseconds, into out: inout [Command]) {
        var wanted: [StreamID] = []
        for position in streams.indices {
            let glance = streams.glance(at: position)
            guard glance.isLive, !glance.isHook, glance.kind != .mix else { continue }
            let stream = streams[position: position]
            if needsMeasuring(stream) { wanted.append(stream.id) }
        }
        let wantedSet = Set(wanted)
        guard wantedSet != measured else { return }
        for id in measured.subtracting(wantedSet).sorted() { out.append(.measure(id, false)) }
        for id in wanted where !measured.contains(id) { out.append(.measure(id, true)) }
        measured = wantedSet
    }

    /// Whether a stream's sound can change a decision: a primary in its grace (the grace counts audible
    /// time), or a stream acting on another app's stream that silence would release.
    private func needsMeasuring(_ stream: TrackedStream) -> Bool {
        guard stream.playing, stream.pausedBy == nil else { return false }
        let cls = stream.interruptionClass
        if cls.kind == .primary, !stream.escalated { return true }
        guard cls.releaseAfter != nil else { return false }
        for position in streams.indices where streams.glance(at: position).kind != .mix {
            let other = streams[position: position]
            guard other.isLive, !other.isHook, affects(stream, other),
                  other.playing || other.pausedBy != nil else { continue }
            // A primary past its grace paused the players it outranks for good; only the streams it holds
            // muted (no player) wait for it to fall silent.
            if cls.kind == .primary, other.player != nil, other.pausedBy == nil { continue }
            return true
        }
        return false
    }
}
