import AudioPolicy
import SessionBus
import SoundBackend

/// The shell's one record of a live sink input: every part's facts of it in one place, begun and ended
/// for all of them by server intake (``LiveStreams``).
///
/// Each part writes its own fields and reads the others': intake the server's snapshot and what the
/// stream's process turned out to be, actuation what it has written (``StreamLevel``: the user's own
/// volume, what a factor of 1 means, the factor written) and the meter, the players where the stream
/// comes from and its player. One lookup finds them all, and a stream that ends leaves nothing behind in
/// any part's table.
struct LiveStream {
    /// The engine's id of the stream: its server instance and index (the one place every part of the
    /// shell takes it from).
    let id: StreamID
    /// The server's latest snapshot, its properties rewritten for a sandboxed app (intake's).
    var input: SinkInput
    /// What the stream's process turned out to be, looked up once at its first sight
    /// (``SandboxedStreams``): every later snapshot's properties are rewritten from it.
    let sandbox: Sandbox.Identity?
    /// What the daemon has done to its level and mute (actuation's; the levels stage's record, the same
    /// the levels rehearsal keeps).
    var level: StreamLevel
    /// Where it comes from — process lineages, app ids — and its player (the players').
    var origin: StreamOrigin
    /// Its peak meter, while the engine wants its sound measured (actuation's).
    var measurement: StreamMeasurement?

    init(_ input: SinkInput, on server: ServerInstance, sandbox: Sandbox.Identity?) {
        id = .playback(input.index, on: server)
        self.input = input
        self.sandbox = sandbox
        level = StreamLevel(own: input.volume)
        origin = StreamOrigin(input.properties)
    }

    /// The stream's journal entry as it stands: its record from the levels stage (`book`:
    /// ``SavedLevelsBook/written(_:own:policyMutedOnRecord:unmuteInFlight:duckLevels:)``, with the run's
    /// `duckLevels`), and `pausedPlayers`. While the server has not said what the stream's volume is, the
    /// entry holds none (a repair must never write the placeholder 0 as the app's saved volume).
    func journalEntry(pausedPlayers: [String], duckLevels: [Double], book: SavedLevelsBook) -> JournalEntry {
        let written = book.written(input, own: input.volumePending ? ChannelVolumes(values: []) : level.own,
                                   policyMutedOnRecord: level.policyMutedOnRecord(mutedNow: input.muted),
                                   unmuteInFlight: level.unmuteInFlight(mutedNow: input.muted), duckLevels: duckLevels,
                                   silenced: level.factor == 0)
        return JournalEntry(input, written: written, heldForLoss: level.heldForLoss, pausedPlayers: pausedPlayers)
    }

    /// Whether the server can take a write of its volume now.
    var writable: Bool { input.hasVolume && input.volumeWritable && !input.volumePending }
}
