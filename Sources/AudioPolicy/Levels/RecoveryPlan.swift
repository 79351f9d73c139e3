/// What one recovery does with the journal an earlier run (or a server that went away) left: the levels
/// stage's plan of it, which the daemon carries out on the server and the levels rehearsal on its model.
///
/// Why one plan: which entry is the word on a stream (the newest), which stream is still the one an entry
/// was written for, what each of those gets (``RecoveryStep``), which are held for a lost output, which
/// were put back, and which ended ones have a saved entry to repair were worked out twice, by the daemon
/// and by the rehearsal that the fixtures and the property run replay; a rule changed in one and not in
/// the other would pass every fixture and fail on the real server. Here they are worked out once, from
/// the journal's entries and what the server says is there now.
public struct RecoveryPlan<Entry> {
    /// A journaled stream as the server has it now.
    public struct Present: Equatable, Sendable {
        public var volume: ChannelVolumes
        public var muted: Bool
        /// It has a volume clients may change.
        public var writable: Bool

        public init(volume: ChannelVolumes, muted: Bool, writable: Bool) {
            self.volume = volume
            self.muted = muted
            self.writable = writable
        }
    }

    /// A stream still there, with what recovery does to it.
    public struct Kept {
        public let entry: Entry
        /// Its index on the server.
        public let index: UInt32
        public let step: RecoveryStep
    }

    /// The newest entry of each stream (``RecoveryStep/newestPerStream(_:_:)``), in the journal's order.
    public let entries: [Entry]
    /// Those whose stream is still there, in the journal's order.
    public let kept: [Kept]
    /// Those whose stream is gone (ended, or another stream has its index now).
    public let gone: [Entry]
    /// The gone ones whose saved entry is repaired: those with a key and an own level to write back.
    public let repairable: [Entry]

    /// Plans the recovery of `journaled` (the journal's entries, oldest first, an index perhaps twice);
    /// `present` tells whether the stream an entry was written for is still there, and as what.
    public init(_ journaled: [Entry], written: (Entry) -> WrittenStream, heldForLoss: (Entry) -> Bool,
                present: (Entry) -> Present?) {
        entries = RecoveryStep.newestPerStream(journaled, written)
        var kept: [Kept] = []
        var gone: [Entry] = []
        for entry in entries {
            let stream = written(entry)
            guard let now = present(entry) else {
                gone.append(entry)
                continue
            }
            kept.append(Kept(entry: entry, index: stream.index,
                             step: RecoveryStep.of(stream, heldForLoss: heldForLoss(entry), volume: now.volume,
                                                   muted: now.muted, writable: now.writable)))
        }
        self.kept = kept
        self.gone = gone
        repairable = gone.filter { entry in
            let stream = written(entry)
            return stream.key != nil && !stream.own.values.isEmpty
        }
        goneIndexes = Set(gone.map { written($0).index })
    }

    /// The indexes of the gone ones, as ``LevelOwnership/recovered(_:gone:present:savedMuted:now:)`` takes them.
    public let goneIndexes: Set<UInt32>

    /// The streams kept muted for a lost output: the engine hears them held.
    public var holds: Set<UInt32> { Set(kept.filter(\.step.held).map(\.index)) }

    /// The streams put back (unmuted, or at their own level again): journaled as they stand once heard
    /// of, until the server has answered the writes.
    public var putBack: Set<UInt32> { Set(kept.filter(\.step.putsBack).map(\.index)) }
}

extension RecoveryStep {
    /// It writes something back: an unmute, or the stream's own level.
    public var putsBack: Bool { unmute || restore != nil }
}
