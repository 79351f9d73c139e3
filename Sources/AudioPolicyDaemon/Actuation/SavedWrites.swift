import SoundServer

/// The levels the daemon recently wrote to streams, by stream-restore key: what the server may have
/// saved for that key from our writes, and so may hand to the key's next stream.
///
/// module-stream-restore saves every volume written to a stream (ours included) as its key's entry
/// and gives it to the next stream of that key whose app sets no volume; WirePlumber does the same on
/// PipeWire, even over a volume the app set. So a new stream of a role or app that starts while
/// another stream of it is ducked or faded starts at *that* duck. Taken for the new stream's own
/// level, it would be ducked again from there and "restored" to the duck when the interruption ends:
/// left quiet by something that is over (found by `audio-policyd soak`). A new stream whose volume is
/// one we wrote for its key gets the own level (and mute) of the stream we wrote it to instead.
struct SavedWrites {
    struct Write: Equatable {
        /// What we wrote.
        var volume: ChannelVolumes
        /// Whether the stream was muted by the policy when we wrote it (a fade-out ends muted).
        var policyMuted: Bool
        /// The stream's own level at the time: what the key's entry should hold.
        var own: ChannelVolumes
    }

    /// The most writes remembered per key: a whole 300 ms ramp at 15 ms steps and then some.
    static let capacity = 48

    private var writes: [String: [Write]] = [:]
    /// An earlier run's journal entries, by key: its ramps passed through every step below their own
    /// level, and the server may have saved any of them.
    private var earlier: [String: [JournalEntry]] = [:]

    /// A volume (or, with `policyMuted`, the mute that ends a fade) written to a stream of `key`
    /// whose own level is `own`.
    mutating func wrote(_ volume: ChannelVolumes, policyMuted: Bool, key: String?, own: ChannelVolumes) {
        guard let key, !own.values.isEmpty, !volume.matches(own) || policyMuted else { return }
        var list = writes[key, default: []]
        list.removeAll { $0.volume.matches(volume) && $0.policyMuted == policyMuted }
        list.append(Write(volume: volume, policyMuted: policyMuted, own: own))
        if list.count > Self.capacity { list.removeFirst(list.count - Self.capacity) }
        writes[key] = list
    }

    /// What an earlier run left changed (its journal): it wrote to those streams too, and the server
    /// may have saved those writes for their keys and given them to streams that started while no
    /// daemon ran. Only the levels a change settles at are known: each stream's own level at each of
    /// the policy's `duckLevels` (linear), and faded out if it was muted.
    mutating func recovered(_ entries: [JournalEntry], duckLevels: [Double]) {
        for entry in entries where !entry.volume.isEmpty {
            if let key = entry.restoreID { earlier[key, default: []].append(entry) }
            let own = entry.ownVolume
            for level in Set(duckLevels) where level < 1 {
                wrote(own.scaled(by: level), policyMuted: false, key: entry.restoreID, own: own)
            }
            if entry.policyMuted { wrote(own.scaled(by: 0), policyMuted: true, key: entry.restoreID, own: own) }
        }
    }

    /// The write a new stream of `key` starting at `volume` (`muted`) was given by the server, if it is
    /// one of ours: the newest such, whose `own` is the stream's real own level.
    func origin(of volume: ChannelVolumes, muted: Bool, key: String?) -> Write? {
        guard let key else { return nil }
        if let write = writes[key]?.last(where: { $0.volume.matches(volume) && (!muted || $0.policyMuted) }) {
            return write
        }
        // A step of an earlier run's ramp: a copy of a journaled stream's own level scaled down by one
        // factor. Told apart from a user's level only when the own level's channels differ (a user's
        // balanced level is a scaled copy of every balanced level).
        return earlier[key]?.last { entry in
            let own = entry.ownVolume
            return (!muted || entry.policyMuted) && !volume.matches(own) && Self.isUnbalanced(own)
                && entry.isScaledDown(volume)
        }.map { Write(volume: volume, policyMuted: $0.policyMuted, own: $0.ownVolume) }
    }

    /// Whether the channels of `volume` differ by more than 2 % of the loudest.
    static func isUnbalanced(_ volume: ChannelVolumes) -> Bool {
        guard let top = volume.values.max(), let bottom = volume.values.min(), top > 0 else { return false }
        return Double(top - bottom) > Double(top) * 0.02
    }
}
