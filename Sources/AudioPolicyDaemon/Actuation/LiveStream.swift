import AudioPolicy
import PulseBackend
import SoundBackend

/// The shell's record of one sink input: the server's latest snapshot, the user's own volume (what
/// a factor of 1 means), and the factor last written.
struct LiveStream {
    /// The engine's id of the stream: its server instance and index (the one place every part of the
    /// shell takes it from).
    let id: StreamID
    var input: SinkInput
    /// The stream's own, user-set, per-channel volume. Ducks scale it; restoring writes it back exactly.
    var ownVolume: ChannelVolumes
    /// The factor last written to the server.
    var factor: Double = 1
    /// The factor the engine's commands ask for now. It differs from ``factor`` while the server cannot
    /// take a write (a stream whose volume pipewire-pulse has not told yet): once it can, this is
    /// written, so the shell carries out what it was told without asking the engine again.
    var wanted: Double = 1
    /// Whether the mute fallback has muted it (so stop and repair unmute it).
    var policyMuted = false
    /// Whether that mute is held until the user acts (its output went away: ``Command/hold(_:)``), so
    /// that recovery after a crash keeps it rather than letting the stream play on the speakers.
    var heldForLoss = false
    /// The policy's unmute of it is sent and the server has not answered it yet: the journal keeps the
    /// policy's mute on record until then (``policyMutedOnRecord``).
    var unmuteUnanswered = false

    init(_ input: SinkInput, on server: ServerInstance) {
        id = .playback(input.index, on: server)
        self.input = input
        self.ownVolume = input.volume
    }

    /// The stream's journal entry as it stands: its record from the levels stage (`book`:
    /// ``StreamRestore/written(_:own:policyMutedOnRecord:unmuteInFlight:duckLevels:)``, with the run's
    /// `duckLevels`), and `pausedPlayers`. While the server has not said what the stream's volume is, the
    /// entry holds none (a repair must never write the placeholder 0 as the app's saved volume).
    func journalEntry(pausedPlayers: [String], duckLevels: [Double], book: StreamRestore) -> JournalEntry {
        let written = book.written(input, own: input.volumePending ? ChannelVolumes(values: []) : ownVolume,
                                   policyMutedOnRecord: policyMutedOnRecord,
                                   unmuteInFlight: !policyMuted && policyMutedOnRecord, duckLevels: duckLevels)
        return JournalEntry(input, written: written, heldForLoss: heldForLoss, pausedPlayers: pausedPlayers)
    }

    /// The policy's mute as the journal has it: in force, or undone by an unmute the server has not
    /// answered. That unmute is lost if the stream ends at once, and its key's saved entry keeps our
    /// mute; after a kill, only the journal tells the next run to repair it unmuted (found by the levels
    /// property run, with a stream's last writes lost after a SIGKILL).
    var policyMutedOnRecord: Bool { policyMuted || (unmuteUnanswered && !input.muted) }

    /// The volume that carries `factor`: exactly the user's own at 1.
    func volume(at factor: Double) -> ChannelVolumes {
        ownVolume.atGain(factor)
    }
}
