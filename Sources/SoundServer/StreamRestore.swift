import EventLoop
import Logging

/// The pulse backend's saved levels as the daemon must deal with them: what the server saved from our
/// writes, which new streams started at one of them, and the repairs that put the user's level back
/// as the entry.
///
/// Only a server with saved levels needs any of this (PulseAudio's module-stream-restore, WirePlumber's
/// restore-stream through pipewire-pulse): there every level written to a stream, ours included,
/// becomes its app's or role's entry and the start of its next stream. So the pulse backend owns it
/// (``StreamServer/restore``), one for all its connections, since what a server saved outlives a
/// connection to it; ALSA saves nothing and has none. The daemon tells it what it wrote and asks it
/// what a new stream's start came from; the facts of the server's saving (whether a stream's mute is
/// saved with its level, which instance gave an index, when our last write to a stream went out) stay
/// here. Touched only on the loop's thread.
public final class StreamRestore {
    /// What a new stream's start came from, when it came from us.
    public struct Origin: Equatable, Sendable {
        /// Its own level: the level under our write, or its start level when only the mute was ours.
        public var own: ChannelVolumes
        /// Whether its mute is ours (our saved mute), not the user's.
        public var mutedByUs: Bool
    }

    /// How long after our last write to a stream its end still gets a repair of its saved entry (µs):
    /// the write's answer takes milliseconds; a second covers a busy server.
    public static let lateWriteWindow: UInt64 = 1_000_000

    /// Where repairs are logged (the daemon hands its own).
    public var log = Logger(label: "audio-policyd")
    /// Levels and mutes we wrote, by key.
    private var writes = SavedWrites()
    /// Streams whose saved entry is being repaired.
    public private(set) var repairing: Set<UInt32> = []
    /// The connection, while there is one.
    private var server: (any StreamServer)?
    /// The highest sink-input index seen on this connection (indexes only grow on one server).
    private var highestIndexSeen: UInt32?
    /// Streams whose mute PulseAudio saves with each change of them (``SavedLevels/savesMuteWithEveryChange``):
    /// a client (we or the user) set their mute, or they started muted (the server restored their key's mute).
    private var muteSaved: Set<UInt32> = []
    /// When we last wrote each stream's volume (monotonic µs): a write sent just before the stream ended
    /// may never have been applied (``lateWriteNeedsRepair(_:journaled:)``).
    private var lastWriteAt: [UInt32: UInt64] = [:]

    public init() {}

    // MARK: - The connection

    /// A new connection of the backend: its saved levels are the ones to read and repair.
    public func connected(to server: any StreamServer) {
        self.server = server
        highestIndexSeen = nil
    }

    public func disconnected() {
        server = nil
    }

    /// The connection's saved levels, while there is one that has them.
    private var levels: (any SavedLevels)? { server?.savedLevels }

    // MARK: - Streams

    /// A stream appeared. Returns whether its key's saved mute is ours (the daemon's record of the key's
    /// streams must then move their ``SavedMuteMark`` above it).
    public func streamAppeared(_ input: SinkInput) -> Bool {
        highestIndexSeen = max(highestIndexSeen ?? 0, input.index)
        if input.muted { muteSaved.insert(input.index) }
        return levels != nil && writes.savedMuteIsOurs(key: input.restoreID)
    }

    /// A stream ended: what was kept of it goes.
    public func streamEnded(_ index: UInt32) {
        muteSaved.remove(index)
        lastWriteAt[index] = nil
    }

    /// Where `input`'s key's saved mute is the policy's mute of it (the policy holds it muted): the
    /// highest index seen, on this server instance; nil otherwise.
    public func savedMuteMark(of input: SinkInput, policyMuted: Bool) -> SavedMuteMark? {
        guard let levels, policyMuted, writes.savedMuteIsOurs(key: input.restoreID) else { return nil }
        return SavedMuteMark(above: max(highestIndexSeen ?? 0, input.index), server: levels.serverCookie)
    }

    // MARK: - What we wrote

    /// A volume written to `input`, whose own level is `own`: the server may save it for the stream's
    /// key. Returns whether that changed whose the key's saved mute is (``levelChanged(_:policyMuted:)``).
    public func wrote(_ volume: ChannelVolumes, to input: SinkInput, own: ChannelVolumes, policyMuted: Bool) -> Bool {
        lastWriteAt[input.index] = MainLoop.monotonicMicroseconds()
        writes.wrote(volume, key: input.restoreID, own: own)
        return levelChanged(input, policyMuted: policyMuted)
    }

    /// The level of `input` changed (our write or the user's): the server saves its mute with it as its
    /// key's, if it saves mutes with every change (WirePlumber) or this stream's mute is one it saves
    /// (PulseAudio). The key's saved mute is then ours exactly when the policy holds `input` muted (the
    /// soak, on PipeWire: the user's volume change to a stream a call had muted saved that mute again
    /// after our unmute of another stream of the key; the next stream started with it and its mute was
    /// taken for the user's, left muted for good). Returns whether whose the saved mute is changed.
    public func levelChanged(_ input: SinkInput, policyMuted: Bool) -> Bool {
        guard let levels, levels.savesMuteWithEveryChange || muteSaved.contains(input.index) else { return false }
        return writes.mutesSaved(ours: policyMuted, key: input.restoreID)
    }

    /// A newer snapshot of `input` (any change: a level, a move, a cork, its properties). PulseAudio's
    /// module-stream-restore saves a stream's mute again with *every* change of a stream whose mute it
    /// saves, not only with a change of its level (the soak, on PulseAudio: a call's mute saved again
    /// when the server moved the muted music off a headset that went away, after our unmute of another
    /// stream had made the key's saved mute no longer ours; the next streams started with it and were
    /// taken for the user's, left muted). WirePlumber saves with a change of the level: ours goes
    /// through ``wrote(_:to:own:policyMuted:)``, someone else's is `theirLevel`. Returns whether whose
    /// the key's saved mute is changed.
    public func streamChanged(_ input: SinkInput, theirLevel: Bool, policyMuted: Bool) -> Bool {
        guard let levels else { return false }
        if levels.savesMuteWithEveryChange {
            return theirLevel && levelChanged(input, policyMuted: policyMuted)
        }
        return levelChanged(input, policyMuted: policyMuted)
    }

    /// A mute or unmute written to `input`, which the server saves as its key's mute.
    public func wroteMute(_ muted: Bool, to input: SinkInput) {
        muteSaved.insert(input.index)
        writes.wroteMute(muted, key: input.restoreID)
    }

    /// Someone else muted or unmuted `input`: its key's saved mute is theirs.
    public func theyMuted(_ input: SinkInput) {
        muteSaved.insert(input.index)
        writes.theyMuted(key: input.restoreID)
    }

    /// Streams ducked now (their journal entries): the levels their ducks settle at outlive the run
    /// (``SavedWrites/rememberSettled(_:)``); ``onSettledChange`` is called when one is new.
    public func rememberSettled(_ streams: [WrittenStream]) {
        var changed = false
        for stream in streams { changed = writes.rememberSettled(stream) || changed }
        if changed { onSettledChange?() }
    }

    /// What an earlier run remembered (``settledDucks``), taken back at start.
    public func rememberSettled(_ ducks: [SettledDuck]) {
        writes.rememberSettled(ducks)
    }

    /// The settled ducks remembered, for the next run.
    public var settledDucks: [SettledDuck] { writes.settledDucks }

    /// Called when a settled duck was remembered for the first time: the daemon keeps them in a file.
    public var onSettledChange: (() -> Void)?

    /// What an earlier run (or a server that went away) left changed, before its streams are restored:
    /// what it wrote may be saved too.
    public func recovered(_ streams: [WrittenStream]) {
        repairing = []
        writes.recovered(streams, server: levels?.serverCookie)
    }

    // MARK: - A new stream

    /// Where a new stream's start came from, if the server gave it a level or mute of ours.
    public func origin(of input: SinkInput) -> Origin? {
        guard levels != nil, !input.volumePending, input.hasVolume,
              var origin = writes.origin(of: input.volume, muted: input.muted, key: input.restoreID, index: input.index),
              origin.own.channels == input.volume.channels else { return nil }
        // A level remembered from an earlier run has no channel map: the stream's is the one.
        if origin.own.channelMap.isEmpty { origin.own.channelMap = input.volume.channelMap }
        return origin
    }

    // MARK: - Repairs

    /// Whether a stream that ended needs its saved entry repaired though nothing is on record for it:
    /// the last step of a restore or fade-in, sent a moment before it ended, may never have been
    /// applied, and the server then keeps the step before it as the saved level (found by the soak).
    public func lateWriteNeedsRepair(_ index: UInt32, journaled: Bool) -> Bool {
        guard levels != nil, !journaled, !repairing.contains(index), let written = lastWriteAt[index] else { return false }
        return MainLoop.monotonicMicroseconds() &- written < Self.lateWriteWindow
    }

    /// Writes each stream's own volume and mute back as its saved entry (keeping the saved device), then
    /// calls `completion` with the connection the writes went to. Nothing is written, and `completion`
    /// is not called, if the connection is lost first; with no saved levels there is nothing to write,
    /// and `completion` is called at once.
    public func repair(_ streams: [WrittenStream], completion: @escaping (any StreamServer) -> Void) {
        guard let server else { return }
        guard let levels = server.savedLevels else { return completion(server) }
        for stream in streams { repairing.insert(stream.index) }
        levels.readSavedEntries { [weak self] saved in
            guard let self else { return }
            for stream in streams { self.repairing.remove(stream.index) }
            guard let connection = self.server, connection === server, connection.isReady else { return }
            // Done only once the server has taken every write: a repair sent as the server goes away
            // (its streams end first, then the connection) is lost, and its entry stays in the journal
            // for the next connection to repair (seen by the soak: a fade-out's mute saved for good).
            var pending = streams.filter { $0.key != nil }.count
            var failed = false
            for stream in streams {
                guard let name = stream.key else { continue }
                let device = saved?.first { $0.name == name }?.device
                let muted = stream.savedEntryMute
                levels.writeSavedEntry(name: name, volume: stream.own, muted: muted, device: device) {
                    [weak self] taken in
                    guard let self else { return }
                    if taken {
                        self.log.info("repaired the saved volume of \(name): \(stream.own)\(muted ? ", muted" : "")")
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
