/// Where a key's saved mute is the policy's (``JournalEntry/savedMuteAbove``): above which sink-input
/// index, on which server instance (``JournalEntry/savedMuteServer``). Indexes mean something only on
/// the instance that gave them, so the two travel together from actuation to the journal entry.
struct SavedMuteMark: Equatable {
    var above: UInt32
    var server: UInt32?
}
