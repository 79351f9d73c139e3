import AudioPolicy
import PulseBackend
import SoundBackend

/// The shell's record of one sink input: the server's latest snapshot, and what the daemon has done to
/// its level and mute (``StreamLevel``: the user's own volume, what a factor of 1 means, and the factor
/// written).
struct LiveStream {
    /// The engine's id of the stream: its server instance and index (the one place every part of the
    /// shell takes it from).
    let id: StreamID
    var input: SinkInput
    /// What the daemon has done to its level and mute (the levels stage's record, the same the levels
    /// rehearsal keeps).
    var level: StreamLevel

    init(_ input: SinkInput, on server: ServerInstance) {
        id = .playback(input.index, on: server)
        self.input = input
        level = StreamLevel(own: input.volume)
    }

    /// The stream's journal entry as it stands: its record from the levels stage (`book`:
    /// ``StreamRestore/written(_:own:policyMutedOnRecord:unmuteInFlight:duckLevels:)``, with the run's
    /// `duckLevels`), and `pausedPlayers`. While the server has not said what the stream's volume is, the
    /// entry holds none (a repair must never write the placeholder 0 as the app's saved volume).
    func journalEntry(pausedPlayers: [String], duckLevels: [Double], book: StreamRestore) -> JournalEntry {
        let written = book.written(input, own: input.volumePending ? ChannelVolumes(values: []) : level.own,
                                   policyMutedOnRecord: level.policyMutedOnRecord(mutedNow: input.muted),
                                   unmuteInFlight: level.unmuteInFlight(mutedNow: input.muted), duckLevels: duckLevels,
                                   silenced: level.factor == 0)
        return JournalEntry(input, written: written, heldForLoss: level.heldForLoss, pausedPlayers: pausedPlayers)
    }

    /// Whether the server can take a write of its volume now.
    var writable: Bool { input.hasVolume && input.volumeWritable && !input.volumePending }
}
