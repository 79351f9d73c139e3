import EventLoop
import Logging
import SoundServer

/// The server's saved levels as actuation deals with them: what the server saved from our writes, a
/// new stream's start at one of them, and the repairs that put the user's level back as the entry.
///
/// Only a backend with saved levels (``StreamServer/savedLevels``: PulseAudio's module-stream-restore,
/// WirePlumber's restore-stream through pipewire-pulse) needs any of this: there every level written
/// to a stream, ours included, becomes its app's or role's entry and the start of its next stream.
/// On ALSA nothing is saved, so nothing is adopted or repaired: every question here answers "none".
/// Actuation owns the stream table and tells this part what it wrote; this part owns what the server
/// may have saved of it, and the repairs in flight. Touched only on the loop's thread.
final class StreamRestore {
    /// How long after our last write to a stream its end still gets a repair of its saved entry (µs):
    /// the write's answer takes milliseconds; a second covers a busy server.
    static let lateWriteWindow: UInt64 = 1_000_000

    private let log: Logger
    /// Levels and mutes we wrote, by key.
    private var writes = SavedWrites()
    /// Streams whose saved entry is being repaired (from the journal or the engine's `repairSaved`).
    private(set) var repairing: Set<UInt32> = []
    /// The connection, while there is one.
    private var server: (any StreamServer)?
    /// The highest sink-input index seen on this connection (indexes only grow on one server).
    private var highestIndexSeen: UInt32?
    /// Whether the connection saves levels at all.
    private var savesLevels: Bool { server?.savedLevels != nil }

    init(log: Logger) {
        self.log = log
    }

    // MARK: - The connection

    /// A new connection: its saved levels (if it has any) are the ones to read and repair.
    func connected(to server: any StreamServer) {
        self.server = server
        highestIndexSeen = nil
    }

    /// A stream appeared. Returns whether its key's saved mute is ours (the journal's entries of the key
    /// must then raise ``JournalEntry/savedMuteAbove`` above it).
    func streamAppeared(_ input: SinkInput) -> Bool {
        highestIndexSeen = max(highestIndexSeen ?? 0, input.index)
        return savesLevels && writes.savedMuteIsOurs(key: input.restoreID)
    }

    /// What `live`'s journal entry records as ``JournalEntry/savedMuteAbove`` (and on which server
    /// instance): the highest index seen while its key's saved mute is the policy's mute of it; nil
    /// otherwise.
    func savedMuteMark(of live: LiveStream) -> SavedMuteMark? {
        guard let levels = server?.savedLevels, live.policyMuted, writes.savedMuteIsOurs(key: live.input.restoreID)
        else { return nil }
        return SavedMuteMark(above: max(highestIndexSeen ?? 0, live.input.index), server: levels.serverCookie)
    }

    func disconnected() {
        server = nil
    }

    // MARK: - What we wrote

    /// A volume written to `live`, which the server may save for its key. Returns whether that changed
    /// whose the key's saved mute is (``levelChanged(_:)``).
    func wrote(_ volume: ChannelVolumes, to live: LiveStream) -> Bool {
        writes.wrote(volume, key: live.input.restoreID, own: live.ownVolume)
        return levelChanged(live)
    }

    /// The level of `live` changed (our write or the user's): the server saves its mute with it as its
    /// key's, if it saves mutes with every change (WirePlumber) or this stream's mute is one it saves
    /// (``LiveStream/muteSaved``, PulseAudio). The key's saved mute is then ours exactly when the
    /// policy holds `live` muted (the soak, on PipeWire: the user's volume change to a stream a call had
    /// muted saved that mute again after our unmute of another stream of the key; the next stream
    /// started with it and its mute was taken for the user's, left muted for good). Returns whether
    /// whose the saved mute is changed.
    func levelChanged(_ live: LiveStream) -> Bool {
        guard let levels = server?.savedLevels, levels.savesMuteWithEveryChange || live.muteSaved else { return false }
        return writes.mutesSaved(ours: live.policyMuted, key: live.input.restoreID)
    }

    /// A mute or unmute written to `live`, which the server saves as its key's mute.
    func wroteMute(_ muted: Bool, to live: LiveStream) {
        writes.wroteMute(muted, key: live.input.restoreID)
    }

    /// Someone else muted or unmuted `live`: its key's saved mute is theirs.
    func theyMuted(_ live: LiveStream) {
        writes.theyMuted(key: live.input.restoreID)
    }

    /// An earlier run's journal, before its streams are restored: what it wrote may be saved too.
    func recovered(_ entries: [JournalEntry]) {
        repairing = []
        writes.recovered(entries, server: server?.savedLevels?.serverCookie)
    }

    // MARK: - A new stream

    /// Where a new stream's start came from, if the server gave it a level or mute of ours.
    func origin(of live: LiveStream) -> SavedWrites.Origin? {
        guard savesLevels, !live.input.volumePending, live.input.hasVolume,
              let origin = writes.origin(of: live.input.volume, muted: live.input.muted, key: live.input.restoreID,
                                         index: live.input.index),
              origin.own.channels == live.input.volume.channels else { return nil }
        return origin
    }

    // MARK: - Repairs

    /// Whether a stream that ended needs its saved entry repaired though nothing is on record for it:
    /// the last step of a restore or fade-in, sent a moment before it ended, may never have been
    /// applied, and the server then keeps the step before it as the saved level (found by the soak).
    func lateWriteNeedsRepair(_ live: LiveStream, journaled: Bool) -> Bool {
        guard savesLevels, !journaled, !repairing.contains(live.input.index),
              let written = live.lastWriteAt else { return false }
        return MainLoop.monotonicMicroseconds() &- written < Self.lateWriteWindow
    }

    /// Writes each entry's own volume and mute back as its saved entry (keeping the saved device), then
    /// calls `completion` with the connection the writes went to. Nothing is written, and `completion`
    /// is not called, if the connection is lost first; with no saved levels there is nothing to write,
    /// and `completion` is called at once.
    func repair(_ entries: [JournalEntry], completion: @escaping (any StreamServer) -> Void) {
        guard let server else { return }
        guard let levels = server.savedLevels else { return completion(server) }
        for entry in entries { repairing.insert(entry.sinkInput) }
        levels.readSavedEntries { [weak self] saved in
            guard let self else { return }
            for entry in entries { self.repairing.remove(entry.sinkInput) }
            guard let connection = self.server, connection === server, connection.isReady else { return }
            // Done only once the server has taken every write: a repair sent as the server goes away
            // (its streams end first, then the connection) is lost, and its entry stays in the journal
            // for the next connection to repair (seen by the soak: a fade-out's mute saved for good).
            var pending = entries.filter { $0.restoreID != nil }.count
            var failed = false
            for entry in entries {
                guard let name = entry.restoreID else { continue }
                let device = saved?.first { $0.name == name }?.device
                levels.writeSavedEntry(name: name, volume: entry.ownVolume, muted: entry.savedMute, device: device) {
                    [weak self] taken in
                    guard let self else { return }
                    if taken {
                        self.log.info("repaired the saved volume of \(name): \(entry.ownVolume)\(entry.savedMute ? ", muted" : "")")
                    } else {
                        failed = true
                        self.log.notice("the repair of the saved volume of \(name) was not taken; kept for the next connection")
                    }
                    pending -= 1
                    if pending == 0, !failed { completion(connection) }
                }
            }
            if pending == 0 { completion(connection) }
        }
    }
}
