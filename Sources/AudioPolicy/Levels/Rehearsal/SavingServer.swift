/// A sound server that saves stream levels, as a pure model: what a new stream of a key starts at, what
/// each write saves, what survives a restart — and, beside each value, the truth of it: the level and
/// mute its user meant. The rehearsal of levels fixtures and the property run play the daemon's levels
/// stage against it (``LevelsRehearsal``); the soak plays the real servers.
///
/// How it saves is ``ServerSaving``'s model: both save every level written to a stream as its key's
/// entry; PulseAudio saves a stream's mute only once a client set it or the server restored it, and
/// then with every change of that stream (a move too); WirePlumber saves the whole state with every
/// change of the level or mute, and keeps on disk only what held for a second, which is what a restart
/// brings back.
public struct SavingServer: Sendable {
    /// A key's saved entry, with what its user meant.
    public struct Entry: Equatable, Sendable {
        public var volume: ChannelVolumes
        public var muted: Bool
        /// The user's own level and mute of the stream that saved it (the daemon's writes change neither).
        public var trueVolume: ChannelVolumes
        public var trueMuted: Bool
        /// When it last changed (ms): WirePlumber stores it once it held for a second.
        public var changedAt: Milliseconds
    }

    /// A live stream.
    public struct Stream: Equatable, Sendable {
        public var key: String
        public var volume: ChannelVolumes
        public var muted: Bool
        /// Its user's own level and mute: what the daemon must take as its own, and give back.
        public var trueOwn: ChannelVolumes
        public var trueMuted: Bool
        /// PulseAudio saves its mute with each change of it (a client set its mute, or it started muted).
        public var muteSaved: Bool
        /// Its key's entry before the daemon's last write to it was saved, for a write the server never
        /// applied; when it was sent, and which save it made (``SavingServer/saves``).
        public var entryBeforeLastWrite: Entry?
        public var lastWriteAt: Milliseconds = .min
        public var lastWriteSave: Int?
        /// The server has reported the daemon's last write to it (``SavingServer/writesReported()``): no
        /// start overtakes it any more.
        public var lastWriteReported = true
        /// It started from the entry a repair of its key replaced (``SavingServer/start(key:appLevel:appMuted:beforeWritesApplied:at:)``):
        /// the server announced it before it answered that repair.
        public var overtookRepair = false

        /// A write at `now`, before it saves anything. The daemon's: the first of a batch notes the entry
        /// before it (`before`); one that `continues` the batch of the same millisecond keeps that, as a
        /// batch goes out (and is lost) as one. Its user's: nothing of the daemon's is left to lose.
        mutating func beginWrite(byDaemon: Bool, before: Entry?, at now: Milliseconds, continues: Bool) {
            defer { lastWriteSave = nil }
            guard byDaemon else { return entryBeforeLastWrite = nil }
            if !continues || lastWriteAt != now || lastWriteSave == nil { entryBeforeLastWrite = before }
            lastWriteAt = now
            lastWriteReported = false
        }
    }

    /// How long a level must hold before WirePlumber stores it (ms).
    public static let settleTime: Milliseconds = 1000

    public let saving: ServerSaving
    /// The instance: a new one after each restart.
    public private(set) var cookie: UInt32 = 1
    public private(set) var streams: [UInt32: Stream] = [:]
    /// What new streams of each key start at.
    public private(set) var entries: [String: Entry] = [:]
    /// What a restart brings back.
    private var stored: [String: Entry] = [:]
    /// The truth of streams that ended, for a repair of their entry written later (by index, this instance).
    private var ended: [UInt32: Stream] = [:]
    private var nextIndex: UInt32 = 0
    /// Saves made so far, and the one each key's entry holds: a lost write undoes its save only if no
    /// other came after it.
    private var saves = 0
    private var entrySave: [String: Int] = [:]
    /// The daemon's last write of each key's entry (a repair): the entry before it, when it was sent, and
    /// the save it made. A start that overtakes it gets that entry, as one that overtakes a write to a
    /// stream does (the 40 s churn on PipeWire: a music stream that started as the repair of a faded-out
    /// stream's entry was answered came up at the fade-out's silence and mute, and its mute was taken for
    /// its user's).
    private var lastRepairs: [String: (before: Entry?, at: Milliseconds, save: Int)] = [:]

    public init(saving: ServerSaving) {
        self.saving = saving
    }

    // MARK: - Streams

    /// A stream of `key` starts; its app asks for `appLevel` (nil: none) and `appMuted`. Returns its index.
    /// `beforeWritesApplied`: it overtakes the daemon's last batch to another stream of the key, or its
    /// last repair of the key's entry, sent within ``writeInFlight`` and the key's latest save: it starts
    /// from the entry that batch or repair replaced (a stream that started 0.14 s after recovery's unmute
    /// of another still got the mute: the soak).
    public mutating func start(key: String, appLevel: ChannelVolumes?, appMuted: Bool,
                               beforeWritesApplied: Bool = false, at now: Milliseconds) -> UInt32 {
        settle(at: now)
        let index = nextIndex
        nextIndex += 1
        var entry = entries[key]
        var overtookRepair = false
        if beforeWritesApplied, let overtaken = streams.values.first(where: { stream in
            stream.key == key && !stream.lastWriteReported && stream.lastWriteSave != nil
                && stream.lastWriteSave == entrySave[key] && now - stream.lastWriteAt <= Self.writeInFlight
        }) {
            entry = overtaken.entryBeforeLastWrite
        } else if beforeWritesApplied, let repair = lastRepairs[key], repair.save == entrySave[key],
                  now - repair.at <= Self.writeInFlight {
            entry = repair.before
            overtookRepair = true
        }
        var stream: Stream
        // PulseAudio restores a saved volume only to a stream whose app set none; WirePlumber always.
        if let entry, appLevel == nil || saving == .wirePlumber {
            stream = Stream(key: key, volume: entry.volume, muted: entry.muted, trueOwn: entry.trueVolume,
                            trueMuted: entry.trueMuted, muteSaved: entry.muted)
        } else {
            let level = appLevel ?? ChannelVolumes(uniform: ChannelVolumes.norm, channels: 2)
            stream = Stream(key: key, volume: level, muted: appMuted, trueOwn: level, trueMuted: appMuted,
                            muteSaved: appMuted)
            // Its mute is still the entry's (PulseAudio restores a mute even to a stream that set its volume).
            if let entry, entry.muted {
                stream.muted = true
                stream.trueMuted = entry.trueMuted
                stream.muteSaved = true
            }
        }
        stream.overtookRepair = overtookRepair
        streams[index] = stream
        return index
    }

    /// WirePlumber restores a new stream's key entry once it has handled the new node, after pipewire-pulse
    /// announced the stream (at 0, its volume late): the stream gets the entry as it is now, with whatever
    /// was saved for the key since the announcement (found by CI's 40 s churn on PipeWire: the mute a
    /// fade-out of another stream of the key saved meanwhile, taken for its user's and left on).
    public mutating func restoreNow(_ index: UInt32, at now: Milliseconds) {
        guard saving == .wirePlumber, var stream = streams[index] else { return }
        settle(at: now)
        guard let entry = entries[stream.key] else { return }
        stream.volume = entry.volume
        stream.muted = entry.muted
        stream.trueOwn = entry.trueVolume
        stream.trueMuted = entry.trueMuted
        stream.muteSaved = entry.muted
        streams[index] = stream
    }

    /// Sets a stream's volume: the daemon's write (`byDaemon`), or its user's (which is its truth from now on).
    /// `continuesBatch`: sent with the daemon's write just before it (one batch, lost as one).
    public mutating func setVolume(_ index: UInt32, _ volume: ChannelVolumes, byDaemon: Bool, at now: Milliseconds,
                                   continuesBatch: Bool = false) {
        guard var stream = streams[index] else { return }
        settle(at: now)
        stream.beginWrite(byDaemon: byDaemon, before: entries[stream.key], at: now, continues: continuesBatch)
        stream.volume = volume
        if !byDaemon { stream.trueOwn = volume }
        streams[index] = stream
        save(index, mute: saving.savesMuteWithEveryChange || stream.muteSaved, at: now)
        if byDaemon { streams[index]?.lastWriteSave = saves }
    }

    /// Mutes or unmutes a stream: the daemon (`byDaemon`) or its user. Either way the server saves it.
    public mutating func setMute(_ index: UInt32, _ muted: Bool, byDaemon: Bool, at now: Milliseconds,
                                 continuesBatch: Bool = false) {
        guard var stream = streams[index] else { return }
        settle(at: now)
        stream.beginWrite(byDaemon: byDaemon, before: entries[stream.key], at: now, continues: continuesBatch)
        stream.muted = muted
        if !byDaemon { stream.trueMuted = muted }
        stream.muteSaved = true
        streams[index] = stream
        save(index, mute: true, at: now)
        if byDaemon { streams[index]?.lastWriteSave = saves }
    }

    /// The server has reported the daemon's writes sent before `sentBefore` (the daemon heard the
    /// changes): a stream that starts from now on starts after them.
    public mutating func writesReported(sentBefore: Milliseconds = .max) {
        for (index, stream) in streams where !stream.lastWriteReported && stream.lastWriteAt < sentBefore {
            streams[index]?.lastWriteReported = true
        }
    }

    /// The server moved the stream (off an output that went away): PulseAudio saves its mute again.
    public mutating func move(_ index: UInt32, at now: Milliseconds) {
        guard let stream = streams[index], saving.savesMuteWithAnyChange, stream.muteSaved else { return }
        settle(at: now)
        save(index, mute: true, at: now)
    }

    /// How long a write is on its way: one sent longer ago than this before its stream ended was applied.
    public static let writeInFlight: Milliseconds = 50

    /// The stream ends; with `lastWriteLost`, the daemon's last writes to it (its last batch: the writes
    /// of one millisecond, as an unmute with its fade's first step), if sent within
    /// ``writeInFlight``, were never applied: they saved nothing, so the key keeps the entry it had before
    /// (a restore's last step, sent as it ended, leaves the step before it saved) — unless another
    /// stream's save came after it. Undone as a whole: the mute too is what the entry had then, not the
    /// stream's now (a save made now would put a mute of ours above a later unmute of another stream).
    public mutating func end(_ index: UInt32, lastWriteLost: Bool, at now: Milliseconds) {
        guard let stream = streams[index] else { return }
        settle(at: now)
        if lastWriteLost, let save = stream.lastWriteSave, now - stream.lastWriteAt <= Self.writeInFlight,
           entrySave[stream.key] == save {
            entries[stream.key] = stream.entryBeforeLastWrite.map { entry in
                var entry = entry
                entry.changedAt = now
                return entry
            }
            if saving == .pulseAudio { stored[stream.key] = entries[stream.key] }
            entrySave[stream.key] = nil
        }
        ended[index] = stream
        streams[index] = nil
    }

    /// The daemon writes a key's entry (a repair) for stream `index` (live or ended on this instance).
    public mutating func writeEntry(_ key: String, volume: ChannelVolumes, muted: Bool, for index: UInt32?,
                                    at now: Milliseconds) {
        settle(at: now)
        let truth = index.flatMap { streams[$0] ?? ended[$0] }
        let old = entries[key]
        // A repair sent with the one before it (one batch: a recovery's of several gone streams of a key)
        // is overtaken with it: a start before the batch gets the entry from before the batch.
        let batch = lastRepairs[key].flatMap { $0.at == now && $0.save == entrySave[key] ? $0 : nil }
        // A value the write takes from the stream is the stream's truth; one it keeps of the entry keeps the
        // entry's; any other is taken as meant (the daemon's repair of a stream it no longer knows).
        let trueVolume: ChannelVolumes
        if let truth, volume.matches(truth.trueOwn, tolerance: 2) {
            trueVolume = truth.trueOwn
        } else if let old, volume.matches(old.volume) {
            trueVolume = old.trueVolume
        } else {
            trueVolume = truth?.trueOwn ?? volume
        }
        let trueMuted: Bool
        if let truth, muted == truth.trueMuted {
            trueMuted = truth.trueMuted
        } else if let old, muted == old.muted {
            trueMuted = old.trueMuted
        } else {
            trueMuted = truth?.trueMuted ?? muted
        }
        entries[key] = Entry(volume: volume, muted: muted, trueVolume: trueVolume, trueMuted: trueMuted, changedAt: now)
        saves += 1
        entrySave[key] = saves
        lastRepairs[key] = (batch.map(\.before) ?? old, now, saves)
        if saving == .pulseAudio { stored[key] = entries[key] }
    }

    /// The server restarts: its streams are gone, indexes start again, and the entries are what it stored.
    public mutating func restart(at now: Milliseconds) {
        settle(at: now)
        streams = [:]
        ended = [:]
        entries = stored
        lastRepairs = [:]
        cookie &+= 1
        nextIndex = 0
    }

    // MARK: - Saving

    private mutating func save(_ index: UInt32, mute: Bool, at now: Milliseconds) {
        guard let stream = streams[index] else { return }
        var entry = entries[stream.key] ?? Entry(volume: stream.volume, muted: false, trueVolume: stream.trueOwn,
                                                 trueMuted: false, changedAt: now)
        entry.volume = stream.volume
        entry.trueVolume = stream.trueOwn
        if mute {
            entry.muted = stream.muted
            entry.trueMuted = stream.trueMuted
        }
        entry.changedAt = now
        entries[stream.key] = entry
        saves += 1
        entrySave[stream.key] = saves
        if saving == .pulseAudio { stored[stream.key] = entry }
    }

    /// WirePlumber stores what held for a second.
    private mutating func settle(at now: Milliseconds) {
        guard saving == .wirePlumber else { return }
        for (key, entry) in entries where now - entry.changedAt >= Self.settleTime { stored[key] = entry }
    }
}
