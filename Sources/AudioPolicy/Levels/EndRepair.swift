/// What a stream's end asks of its key's saved entry (``LevelOwnership/streamEnded(_:journaled:now:)``).
///
/// A server with saved levels kept what we last wrote to the stream as its key's entry: the entry must
/// get the stream's own level and its user's mute back, or the key's next stream starts ducked or muted.
/// One verdict, for the daemon and the levels rehearsal alike.
public enum EndRepair: Equatable, Sendable {
    /// Nothing to repair: no change of ours is on record and none was written a moment before, or a
    /// repair of its entry is already under way (its answer clears the journal's entry).
    case none
    /// The journal's entry, a change of ours on record: it is what the entry is repaired to.
    case journaled
    /// Nothing is on record, but our last write went out less than ``LevelOwnership/lateWriteWindow``
    /// before the end: the last step of a restore or fade-in may never have been applied, and the server
    /// then keeps the step before it (found by the soak). Repaired to the stream as the daemon last had it.
    case lateWrite
}
