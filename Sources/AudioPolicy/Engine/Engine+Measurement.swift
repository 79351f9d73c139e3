/// Which streams' sound is measured: only those whose audibility can change a decision, so that music
/// playing alone (or anything nothing depends on) costs the shell no meter and the daemon no wake-ups.
extension Engine {
    /// The streams a candidate could act on, summed up per app and class: one pass over the streams,
    /// so that asking for each candidate costs the number of apps, not the number of streams.
    private struct Targets {
        struct Group {
            var cls: InterruptionClass
            /// The earliest activation among them: a same-class interrupter acts only on older streams.
            var firstActivation: Int
            /// Whether any of them has no player (or is held paused by us): a primary past its grace
            /// acts only on those, having paused the players for good.
            var anyWithoutPlayer: Bool
        }

        private(set) var byApp: [String: [Group]] = [:]

        /// Adds one stream to its app's groups, changed in place: copied out of the dictionary and back,
        /// they were copied whole for each stream (the dictionary still held them), with the app's name
        /// hashed twice — a third of the engine's work in a decision among 200 streams of one app.
        mutating func add(_ stream: TrackedStream) {
            Self.add(stream, to: &byApp[stream.app, default: []])
        }

        private static func add(_ stream: TrackedStream, to groups: inout [Group]) {
            let cls = stream.interruptionClass
            let withoutPlayer = stream.player == nil || stream.pausedBy != nil
            if let position = groups.firstIndex(where: { $0.cls.name == cls.name }) {
                groups[position].firstActivation = min(groups[position].firstActivation, stream.activation)
                groups[position].anyWithoutPlayer = groups[position].anyWithoutPlayer || withoutPlayer
            } else {
                groups.append(Group(cls: cls, firstActivation: stream.activation, anyWithoutPlayer: withoutPlayer))
            }
        }
    }

    /// Asks the shell to start or stop measuring streams, after a decision changed who matters.
    mutating func updateMeasurements(now: Milliseconds, into out: inout [Command]) {
        // Positions, not ids: the streams to measure are told in table order, and an id is read only for
        // the few wanted (each record's identity is an object of its own, out of the cache in a daemon
        // woken by a prompt: reading all 200 ids to order the few wanted, and hashing each, was a fifth
        // of the daemon's share of a prompt's reaction in bench's profile).
        var wanted: [Int] = []
        var candidates: [Int] = []
        var targets = Targets()
        for position in streams.indices {
            let glance = streams.glance(at: position)
            guard glance.isLive, !glance.isHook, glance.kind != .mix else { continue }
            let stream = streams[position: position]
            if stream.playing || stream.pausedBy != nil { targets.add(stream) }
            guard stream.playing, stream.pausedBy == nil else { continue }
            if stream.interruptionClass.kind == .primary, !stream.escalated {
                // Its grace counts audible time.
                wanted.append(position)
            } else if stream.interruptionClass.releaseAfter != nil {
                candidates.append(position)
            }
        }
        for position in candidates where actsOnAnother(streams[position: position], targets) {
            wanted.append(position)
        }
        // Most decisions change nothing measured: that is told without building a set (each one built
        // looked its generic type up at run time, a tenth of the reconciliation's share in the daemon).
        // Each stream is in `wanted` once.
        let wantedIDs = wanted.map { streams.id(at: $0) }
        guard wantedIDs.count != measured.count || !wantedIDs.allSatisfy(measured.contains) else { return }
        let wantedSet = Set(wantedIDs)
        for id in measured.subtracting(wantedSet).sorted() { out.append(.measure(id, false)) }
        for (_, id) in zip(wanted, wantedIDs).sorted(by: { $0.0 < $1.0 }) where !measured.contains(id) {
            out.append(.measure(id, true))
        }
        measured = wantedSet
    }

    /// Whether a stream is acting on another app's stream that its silence would release.
    private func actsOnAnother(_ stream: TrackedStream, _ targets: Targets) -> Bool {
        let cls = stream.interruptionClass
        for (app, groups) in targets.byApp where app != stream.app {
            for group in groups where policy.interrupts(cls, group.cls) {
                if cls.name == group.cls.name, stream.activation <= group.firstActivation { continue }
                // A primary past its grace paused the players it outranks for good; only the streams it
                // holds muted (no player) wait for it to fall silent.
                if cls.kind == .primary, !group.anyWithoutPlayer { continue }
                return true
            }
        }
        return false
    }
}
