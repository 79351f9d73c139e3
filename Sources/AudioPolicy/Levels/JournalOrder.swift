/// The order in which a journal's streams last changed in a way the server may have saved: the order
/// recovery takes them in, oldest change first.
///
/// Why an order: a server saves the last level written to any stream of a key as the key's entry, and a
/// stream that starts while no daemon runs gets it. A start at a level that is a scaled copy of the own
/// levels of two journaled streams of its key (silence, after both were faded out) came from the one
/// changed last, and recovery's writes of own levels leave the key at the one written last. Sorted by
/// index instead, a podcast faded out before a video of its key was taken for the owner of a start at
/// the video's silence (found by the levels property run, on both servers). The daemon's journal and
/// the levels rehearsal's keep it alike; what counts as a change is ``WrittenStream/savesLike(_:)``.
public struct JournalOrder: Sendable {
    /// When each stream's entry last changed, by stream index (a count, not a time).
    @usableFromInline private(set) var changed: [UInt32: UInt64] = [:]
    private var count: UInt64 = 0

    public init() {}

    /// Stream `index`'s entry is now `new` (it was `old`): a change of what the server may have saved
    /// moves it to the newest place.
    public mutating func recorded(_ index: UInt32, _ new: WrittenStream, over old: WrittenStream?) {
        guard old.map({ !$0.savesLike(new) }) ?? true || changed[index] == nil else { return }
        count += 1
        changed[index] = count
    }

    /// Stream `index`'s entry is gone.
    public mutating func removed(_ index: UInt32) {
        changed[index] = nil
    }

    /// Every entry is gone (moved to recovery, or the run died).
    public mutating func removeAll() {
        changed = [:]
    }

    /// `entries` (by stream index), oldest change first; ties and unknown ones by index.
    ///
    /// Inlinable, so that the daemon's journal gets it specialized for its entries: the generic copy,
    /// with its key path instantiated at run time, was a tenth of the daemon's share of a prompt's
    /// reaction (the journal is saved before the duck is sent).
    @inlinable public func sorted<Entry>(_ entries: [UInt32: Entry]) -> [Entry] {
        entries.sorted { left, right in
            let l = changed[left.key] ?? 0, r = changed[right.key] ?? 0
            return l != r ? l < r : left.key < right.key
        }.map { $0.value }
    }
}

extension WrittenStream {
    /// Whether `other` leaves the server with what this leaves it (own level, mute, the policy's mute, a
    /// fade at silence): a change of anything else (where the key's saved mute is ours, the players
    /// paused) writes nothing the server saves.
    public func savesLike(_ other: WrittenStream) -> Bool {
        own.values == other.own.values && muted == other.muted && policyMuted == other.policyMuted
            && silenced == other.silenced
    }
}
