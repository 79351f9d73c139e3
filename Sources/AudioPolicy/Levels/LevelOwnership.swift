/// Whose a stream's saved level and mute are — the user's, this run's, a dead run's — and when a saved
/// entry needs repair: the levels stage's decisions about what a server saved, pure.
///
/// A backend with saved levels (PulseAudio's module-stream-restore, WirePlumber through pipewire-pulse)
/// reports facts to it — a stream appeared with its key, level and mute; we wrote a level or a mute;
/// someone else changed one; the stream changed or ended; an earlier run's journal — and asks it where a
/// new stream's start came from, whether the key's saved mute is ours, and whether an ended stream's
/// entry needs repair. Everything that depends on the server is in ``ServerSaving``; time is an input
/// (`now`, monotonic µs), so fixtures (`Tests/Fixtures/levels/`) and property runs replay it exactly as
/// the daemon lives it.
public struct LevelOwnership: Sendable {
    /// How long after our last write to a stream its end still gets a repair of its saved entry (µs):
    /// the write's answer takes milliseconds; a second covers a busy server.
    public static let lateWriteWindow: UInt64 = 1_000_000

    /// How the connected server saves (nil: not connected, or it saves nothing, as ALSA).
    public private(set) var saving: ServerSaving?
    /// The connected server instance's cookie (a sink-input index means something only on it).
    public private(set) var server: UInt32?
    /// Levels and mutes we wrote, by key.
    private var writes = SavedWrites()
    /// Streams whose saved entry is being repaired.
    public private(set) var repairing: Set<UInt32> = []
    /// Our unmutes of a stream whose key's saved mute was ours, by key, until the server has answered
    /// them (``writesAnswered(sentBefore:)``): the stream and when it was sent (µs). A kill and the
    /// stream's end may lose one, and the key then keeps our mute (``savedMuteMark(of:key:policyMuted:unmuteInFlight:)``).
    private var unansweredUnmutes: [String: (index: UInt32, at: UInt64)] = [:]
    /// The highest sink-input index seen on this connection (indexes only grow on one server).
    private var highestIndexSeen: UInt32?
    /// What is kept of each stream, from the first fact about it until it ends: one record per stream.
    private var streams: [UInt32: StreamLevels] = [:]
    /// How many of them were announced without their volume and mute and wait for it (``StreamLevels/pending``).
    private var pendingCount = 0
    /// Streams that ended within ``lateWriteWindow`` of our unmute: the server may never have applied it,
    /// and the mute it saved for their key is then ours (``repairMute(of:saved:)``).
    private var unmuteMayBeLost: Set<UInt32> = []
    /// Keys whose saved mute a write of ours handed over, not yet applied: the stream written, when (µs),
    /// the mute the write leaves it with, and whether the saved mute became ours. Until the server has
    /// applied the write, a stream of the key that starts gets the mute saved before it: handed from ours
    /// (an unmute), a muted start has our mute (the 40 s churn on PulseAudio: a music stream that started
    /// 0.14 s after recovery's unmute of another came up muted, was taken for one its user muted and
    /// stayed muted); handed to ours (a fade-out's mute), a muted start has its user's (found by the levels
    /// property run). Gone with the write's echo (the server reports the stream with that mute: it applied
    /// and saved the write before anything that starts later), after ``lateWriteWindow``, or when someone
    /// else mutes a stream of the key or a repair writes its entry. Not a window alone: an app that starts
    /// its stream muted a moment after our unmute was applied is muted by its user (the property run).
    private var handOvers: [String: HandOver] = [:]
    /// Until when (µs) a start at a balanced copy of a recovered stream's balanced own level is taken for
    /// a step of the earlier run's ramp (``SavedWrites/origin(of:muted:key:index:mutedByUs:balancedSteps:)``):
    /// ``lateWriteWindow`` after the recovery, whose writes (the own levels of the streams present, the
    /// repairs of those gone) the server saves over any step within milliseconds. Later, such a level is
    /// one its user or app chose.
    private var balancedStepsUntil: UInt64?
    /// Keys whose saved mute is, as last told, a mute someone else set (``theyMuted(_:key:muted:)``): our
    /// mute written over it hands the saved mute to us, and a stream that starts before the server applied
    /// that write has theirs.
    private var mutedByThem: Set<String> = []
    /// Each key's saved mute as its users have it: the mute, with the policy's taken off, of the stream
    /// whose mute the server saved last for the key, as this run heard it or an earlier run's journal
    /// tells it (``WrittenStream/keyUsersMute``). What a repair writes for a stream the policy muted
    /// (``repairMute(of:saved:)``). Found by the levels property run: the policy held one music stream
    /// muted, its user muted another, and after a kill and a server restart the held stream's repair
    /// wrote the key's entry unmuted, its own mute; the saved mute itself cannot tell, as recovery's
    /// write of the held stream's level saves the policy's mute over the user's.
    private var usersMutes: [String: Bool] = [:]

    /// A write of ours that handed a key's saved mute over, until the server reports it applied.
    private struct HandOver {
        var index: UInt32
        var at: UInt64
        /// The stream's mute once the write is applied; nil for a level write that handed the saved mute
        /// to us: any report of the stream shows it applied (the mute it had is unknown here: the daemon
        /// tells the mute reported, the rehearsal the user's).
        var muted: Bool?
        var toOurs: Bool
        /// Made by a level write from ours to the stream's own mute (a duck's first step on WirePlumber, or
        /// of a stream whose mute PulseAudio saves): the stream's next write saves its mute again.
        var byLevelWrite = false
        /// For our mute written over a saved mute that was not a mute (``toOurs``): a muted start at silence
        /// (the fade-out's, which came before the mute) has ours, not the one saved before.
        var overAnUnmute = false
    }

    /// What the levels stage keeps of one stream.
    private struct StreamLevels {
        /// PulseAudio saves its mute with each change of it: a client (we or the user) set its mute, or it
        /// started muted (the server restored its key's mute).
        var muteSaved = false
        /// When we last wrote its volume or mute: a write sent just before it ended may never have been
        /// applied (``EndRepair/lateWrite``).
        var lastWriteAt: UInt64?
        /// When we last unmuted it, until it is muted again.
        var unmuteSentAt: UInt64?
        /// Announced without its volume and mute (pipewire-pulse tells them late): whose its key's saved
        /// mute has been since. WirePlumber gives a new stream its key's entry once it has handled the new
        /// node, at some moment between the announcement and the volume's arrival, so the mute it gave may
        /// be any the key had meanwhile.
        var pending: PendingMute?
    }

    /// Whose a pending stream's key's saved mute has been, from the stream's announcement until now.
    private struct PendingMute {
        var key: String
        /// The policy's mute, at some moment.
        var ours = false
        /// A mute someone else set, at some moment.
        var theirs = false

        /// Whether a muted arrival has our mute: ours at some moment, and never someone else's. When both
        /// were saved meanwhile, the volume that came with it tells which entry it was (`ourLevel`: one of
        /// our writes, a fade-out's silence or a duck, which our mute was saved with; found by the levels
        /// property run: a user's mute of another stream of the key a moment after the start); at any
        /// other level the mute is left as its user's: it is a mute its user gave the key.
        func mutedByUs(ourLevel: Bool) -> Bool {
            ours && (!theirs || ourLevel)
        }

        func merged(_ state: (ours: Bool, theirs: Bool)) -> PendingMute {
            PendingMute(key: key, ours: ours || state.ours, theirs: theirs || state.theirs)
        }
    }

    /// Repairs of a key's entry that wrote over our saved mute, by key: when the server took it (µs) and
    /// the mute it wrote. A stream that started before the server applied the repair, but is heard of
    /// after its answer, started from the entry the repair replaced, with our mute (the 40 s churn on
    /// PipeWire, CI's seed: a music stream that came up at a fade-out's silence and mute as the repair of
    /// the faded stream's entry was answered was taken for one its user muted, and the key saved muted).
    /// Which streams did is ``ServerSaving/appliesEntriesBeforeAnswering``'s question, for
    /// ``lateWriteWindow`` (``overtakenRepair(of:volume:index:announcedAt:now:)``).
    private var repairsOverOurMute: [String: RepairOverOurMute] = [:]

    /// A repair of a key's entry over our mute (``repairsOverOurMute``), or the repairs of one batch.
    private struct RepairOverOurMute {
        /// When the server took the first (µs).
        var at: UInt64
        /// The mute the last wrote: the entry's.
        var muted: Bool
        /// The levels and mutes they wrote (nil: not all known). WirePlumber gives every new stream its
        /// key's saved volume and mute, so a muted start at none of the levels they wrote muted was given
        /// the entry they replaced.
        var written: [(level: ChannelVolumes, muted: Bool)]?
    }
    /// Keys whose repair, sent and not yet taken, writes over the mute of ours an unmute that was lost
    /// left saved (``repairSent(key:muted:over:for:)``).
    private var repairsOverLostUnmute: Set<String> = []

    /// Recovery's writes that handed a key's saved mute over, in flight once the streams present are
    /// judged: its unmutes of keys whose saved mute was ours, and its writes of a held stream's level
    /// under our mute (which PulseAudio saves with it) of keys whose saved mute was not.
    private var recoveryHandOvers: [(key: String, index: UInt32, at: UInt64, toOurs: Bool)] = []
    /// The keys whose saved mute recovery's writes handed over (an unmute: to the user's; a level under a
    /// held mute: to ours), until the streams present are judged: their journal entries must say so then.
    /// The hand-over itself counts at once, in the order of the writes: what this run writes next, while it
    /// hears the streams present, comes after it (the 120 s churn on PipeWire: recovery unmuted the music,
    /// the call present muted it at once, and that newer mute of ours was dropped as the streams present
    /// were judged; a stream that started next with it was taken for one its user muted). The streams
    /// present are judged against what was saved before the connection (``SavedWrites/connectionBegan()``).
    private var savedByRecovery: Set<String> = []

    public init() {}

    // MARK: - The connection

    /// A new connection, to a server that saves as `saving` (nil: nothing), instance `server`.
    public mutating func connected(saving: ServerSaving?, server: UInt32?) {
        self.saving = saving
        self.server = server
        highestIndexSeen = nil
        unansweredUnmutes = [:]
        unmuteMayBeLost = []
        handOvers = [:]
        repairsOverOurMute = [:]
        writes.connectionBegan()
        for index in streams.keys where streams[index]?.pending != nil { setPending(index, nil) }
    }

    /// The connected server told its kind or instance (after ``connected(saving:server:)``: a pulse
    /// connection learns both once it is ready).
    public mutating func serverKnown(saving: ServerSaving?, server: UInt32?) {
        self.saving = saving
        self.server = server
    }

    public mutating func disconnected() {
        saving = nil
    }

    // MARK: - Streams

    /// A stream appeared. Returns whether its key's saved mute is ours (the journal's record of the key's
    /// streams must then move their ``SavedMuteMark`` above it).
    ///
    /// A muted start counts as seen only once it is judged (``startJudged(_:)``): until the daemon has
    /// put a start at our mute right, the journal's marks must stay below it, or a kill in between leaves
    /// the next run a stream at or below the marks, which it takes for one its user muted (the 40 s churn
    /// on PipeWire, CI's seed: the daemon was killed 15 ms after a music stream started with the mute of
    /// a stream it had faded out, and the next run left that music muted for good).
    public mutating func streamAppeared(_ index: UInt32, key: String?, muted: Bool) -> Bool {
        if muted {
            streams[index, default: StreamLevels()].muteSaved = true
        } else {
            highestIndexSeen = max(highestIndexSeen ?? 0, index)
        }
        return saving != nil && writes.savedMuteIsOurs(key: key)
    }

    /// The daemon has heard of stream `index`'s start and acted on it (a start at our mute is put right,
    /// or the policy mutes it now): it counts as seen (``streamAppeared(_:key:muted:)``), and the journal's
    /// marks of its key go above it. Returns whether they rose (only a muted start's can: an unmuted one
    /// counts as seen as it appears), so that the journal is rewritten only then.
    @discardableResult
    public mutating func startJudged(_ index: UInt32) -> Bool {
        let raised = highestIndexSeen.map { $0 < index } ?? true
        if raised { highestIndexSeen = index }
        return raised
    }

    /// A stream appeared at `now` without its volume and mute (pipewire-pulse tells them late): whose its
    /// key's saved mute is now, and may be until they arrive, is kept for the answer about its start
    /// (``origin(of:key:volume:muted:volumeKnown:now:)``, ``PendingMute``). It does not count as seen until they arrive
    /// (``volumeArrived(_:key:muted:)``): a run that dies before cannot tell its mute from ours.
    public mutating func announcedWithoutVolume(_ index: UInt32, key: String?, now: UInt64) {
        guard saving != nil, let key else { return }
        setPending(index, PendingMute(key: key).merged(savedMute(of: key, index: index, now: now)))
    }

    /// Sets or clears a stream's ``StreamLevels/pending``, keeping ``pendingCount``.
    private mutating func setPending(_ index: UInt32, _ pending: PendingMute?) {
        let was = streams[index]?.pending != nil
        if pending != nil || streams[index] != nil { streams[index, default: StreamLevels()].pending = pending }
        pendingCount += (pending != nil ? 1 : 0) - (was ? 1 : 0)
    }

    /// Whose `key`'s saved mute may be now, for a stream `index` of it: the policy's (this run's, an earlier
    /// run's for a stream above its mark, or either side of a write of ours in flight that handed it over)
    /// and a mute someone else set.
    private func savedMute(of key: String, index: UInt32, now: UInt64?) -> (ours: Bool, theirs: Bool) {
        if let flight = now.map({ handOver(of: key, now: $0) }) ?? handOvers[key] {
            // Before the write and after it: from ours to the written stream's mute, or from theirs to ours.
            return (true, flight.toOurs || flight.muted == true)
        }
        // A repair over our mute that WirePlumber may not have applied yet: before it, ours; after it, the
        // mute it wrote.
        if let now, let repair = recentRepair(of: key, now: now), saving?.appliesEntriesBeforeAnswering == false {
            return (true, repair.muted)
        }
        let ours = writes.savedMuteIsOurs(key: key, index: index)
        return (ours, !ours && mutedByThem.contains(key))
    }

    /// The key's saved mute may have changed hands: every stream of it announced without its mute notes
    /// whose it may be now.
    private mutating func notePending(_ key: String?, now: UInt64? = nil) {
        // Called for every ramp step: with no stream waiting for its volume (the usual case) there is
        // nothing to look through.
        guard let key, pendingCount > 0 else { return }
        for (index, stream) in streams {
            guard let pending = stream.pending, pending.key == key else { continue }
            let merged = pending.merged(savedMute(of: key, index: index, now: now))
            streams[index]?.pending = merged
        }
    }

    /// The volume and mute of a stream announced without them arrived (after the answer about its start).
    /// Returns whether its key's saved mute is ours (as ``streamAppeared(_:key:muted:)``).
    public mutating func volumeArrived(_ index: UInt32, key: String?, muted: Bool) -> Bool {
        setPending(index, nil)
        return streamAppeared(index, key: key, muted: muted)
    }

    /// A stream ended at `now`: what was kept of it goes, and the verdict says whether its key's saved
    /// entry needs a repair (``EndRepair``). `journaled`: the journal has an entry of it.
    public mutating func streamEnded(_ index: UInt32, journaled: Bool, now: UInt64) -> EndRepair {
        let repair: EndRepair
        if journaled {
            repair = repairing.contains(index) ? .none : .journaled
        } else {
            repair = lateWriteNeedsRepair(index, now: now) ? .lateWrite : .none
        }
        streamEnded(index, now: now)
        return repair
    }

    /// A stream ended (at `now`, when known) with nothing to repair (the server went away with it): what
    /// was kept of it goes. An unmute of ours sent less than ``lateWriteWindow`` before may never have
    /// been applied: its repair will not trust the mute read back.
    public mutating func streamEnded(_ index: UInt32, now: UInt64? = nil) {
        setPending(index, nil)
        if let sent = streams.removeValue(forKey: index)?.unmuteSentAt, let now, now &- sent < Self.lateWriteWindow {
            unmuteMayBeLost.insert(index)
        }
    }

    /// Where stream `index`'s key's saved mute is the policy's mute of it (the policy holds it muted):
    /// the highest index seen, on this server instance; nil otherwise. The mute may be an earlier run's
    /// that this run kept on (a held stream recovery left muted at the level its user set meanwhile,
    /// which saves nothing new): its mark is carried on, or a second kill would lose it and a stream
    /// that starts after it with our mute would be taken for one its user muted (found by the levels
    /// property run: 3 of 240,000 sequences on PulseAudio).
    /// `unmuteInFlight`: the policy's unmute of it is sent and not answered (its mute stays on the
    /// journal's record): where the key's saved mute is not ours, the mark still says where it would be
    /// if that unmute were lost (``SavedMuteMark/ifUnmuteLost``). Found by the levels property run: the
    /// daemon was killed as it unmuted a stream that then ended, its unmute lost, and a stream that started
    /// while no daemon ran got our mute and was taken for one its user muted.
    private func savedMuteMark(of index: UInt32, key: String?, policyMuted: Bool,
                               unmuteInFlight: Bool) -> SavedMuteMark? {
        guard saving != nil, policyMuted, let key else { return nil }
        let ours = writes.savedMuteMayBeOurs(key: key)
        // Our unmute of another stream of the key, not yet reported applied (a start at our mute, put
        // right): if a kill and the stream's end lose it, the key keeps our mute (found by the levels
        // property run: a stream that started with it while no daemon ran was taken for its user's).
        let another = unansweredUnmutes[key].flatMap { $0.index != index ? $0.index : nil }
        // Our repair of the key's entry over our mute, with no save since: a stream that starts before the
        // server applies it gets our mute at a level of ours (the entry the repair replaced), one after it
        // the repair's (found by the levels property run, seed 14888692654471620564 on PipeWire: the repair
        // of a ducked stream's entry took the mark of a faded one off, a start overtook the repair at the
        // fade's silence with our mute, and after a kill the next run left it muted; and, a mark that
        // counted at any level, repair-takes-our-mark-off.toml).
        let overtakable = !ours && repairsOverOurMute[key] != nil
        guard ours || overtakable || unmuteInFlight || another != nil else { return nil }
        let plain = ours || overtakable
        return SavedMuteMark(above: max(highestIndexSeen ?? 0, index), server: server, ifUnmuteLost: !plain,
                             unmuteOf: plain || unmuteInFlight ? nil : another, atOurLevelsOnly: overtakable)
    }

    /// Stream `index`'s record for the journal as the levels stage has it now: its own level `own` and
    /// its user's mute (none while the policy's mute is on record, `policyMutedOnRecord`: the policy never
    /// mutes a stream its user muted), with what the stage knows of its key's saved mute — where it is the
    /// policy's (``savedMuteMark(of:key:policyMuted:unmuteInFlight:)``; `unmuteInFlight`: the policy's
    /// unmute of it is not answered yet), as its users have it (``usersMute(ofKey:policyMuted:)``), saved
    /// with each change (``muteSaved(_:)``) — and the server instance. What a kill leaves the next run to
    /// recover from: composed here once, for the daemon's journal and the rehearsal's alike.
    public func written(_ index: UInt32, key: String?, own: ChannelVolumes, usersMute: Bool, policyMutedOnRecord: Bool,
                        unmuteInFlight: Bool, duckLevels: [Double], silenced: Bool = false) -> WrittenStream {
        WrittenStream(index: index, key: key, own: own, muted: policyMutedOnRecord ? false : usersMute,
                      policyMuted: policyMutedOnRecord, duckLevels: duckLevels,
                      savedMute: savedMuteMark(of: index, key: key, policyMuted: policyMutedOnRecord,
                                               unmuteInFlight: unmuteInFlight),
                      server: server, keyUsersMute: self.usersMute(ofKey: key, policyMuted: policyMutedOnRecord),
                      muteSaved: muteSaved(index), silenced: silenced)
    }

    /// The saved-mute mark of `stream`, a journal record of a stream that ended and whose entry is kept
    /// until the server has answered its repair, as it must be now: the key's saved mute may have changed
    /// hands since it ended (someone muted another stream of the key), and a kill before that answer
    /// leaves the record to the next run. A stale mark there made the next run unmute a stream its user
    /// had muted (found by the levels property run, seed 2656334811696958429, once the rehearsal kept such
    /// records as the daemon does). An unmute of its own in flight when it ended stays in flight
    /// (``SavedMuteMark/ifUnmuteLost``). Our own repair of the key over our mute leaves the mark as it
    /// was: a stream that starts before the server applies it gets our mute (``repairsOverOurMute``), and
    /// the mark is what tells the next run so (the property run: seed 15658470770078386283 on PipeWire).
    public func savedMuteMark(ofEnded stream: WrittenStream) -> SavedMuteMark? {
        if let key = stream.key, repairsOverOurMute[key] != nil { return stream.savedMute }
        let ownUnmute = stream.savedMute.map { $0.ifUnmuteLost && $0.unmuteOf == nil } ?? false
        return savedMuteMark(of: stream.index, key: stream.key, policyMuted: stream.policyMuted,
                             unmuteInFlight: ownUnmute)
    }

    /// Whether the server saves stream `index`'s mute with each change of its level, for its journal entry
    /// (``WrittenStream/muteSaved``): always on WirePlumber; on PulseAudio once a client set its mute or
    /// it started muted.
    private func muteSaved(_ index: UInt32) -> Bool {
        saving?.savesMuteWithEveryChange == true || streams[index]?.muteSaved == true
    }

    /// `key`'s saved mute as its users have it (``usersMutes``), for the journal's entry of a stream the
    /// policy mutes (``WrittenStream/keyUsersMute``); nil for any other stream, or when none was heard of.
    private func usersMute(ofKey key: String?, policyMuted: Bool) -> Bool? {
        guard policyMuted, let key else { return nil }
        return usersMutes[key]
    }

    /// The server saved a stream's mute as `key`'s: `usersMute` is that stream's mute as its users have
    /// it (unmuted where the policy mutes it: the policy never mutes a stream its user muted). Returns
    /// whether the key's changed (the journal's entries of the key's streams the policy mutes carry it).
    @discardableResult
    private mutating func noteSaved(usersMute: Bool, key: String?, byRepair: Bool = false) -> Bool {
        guard let key else { return false }
        // A save after a repair (other than the next repair of its batch): the entry that repair replaced is
        // no longer what a new stream gets. Called for every ramp step: with no such repair (the usual case)
        // there is nothing more to hash.
        if !byRepair, !repairsOverOurMute.isEmpty { repairsOverOurMute[key] = nil }
        // Likewise a repair over a lost unmute that was never taken: a later save is the key's entry now.
        if !byRepair, !repairsOverLostUnmute.isEmpty { repairsOverLostUnmute.remove(key) }
        return usersMutes.updateValue(usersMute, forKey: key) != usersMute
    }

    // MARK: - What we wrote

    /// A volume written to stream `index` of `key`, whose own level is `own`: the server may save it for
    /// the key. `muted`: the stream's mute, as far as we know, once our writes sent with this one are
    /// applied. Returns whether that changed whose the key's saved mute is (``levelChanged(_:key:policyMuted:muted:)``).
    public mutating func wrote(_ volume: ChannelVolumes, to index: UInt32, key: String?, own: ChannelVolumes,
                               policyMuted: Bool, muted: Bool, now: UInt64) -> Bool {
        streams[index, default: StreamLevels()].lastWriteAt = now
        writes.wrote(volume, key: key, own: own)
        let wasOurs = key.map { writes.savedMuteMayBeOurs(key: $0) } ?? false
        // Only a write of a stream the policy mutes can hand the saved mute to us: no lookup per step else.
        let usersMuted = policyMuted && !wasOurs && key.flatMap { usersMutes[$0] } == true
        let changed = levelChanged(index, key: key, policyMuted: policyMuted, muted: muted)
        if wasOurs, let key, !writes.savedMuteMayBeOurs(key: key) {
            // The saved mute goes from ours to this stream's (an unmute's batch, whose fade-in's first step
            // comes first; on WirePlumber, a duck of another stream of the key): until the server has
            // applied the write, a stream that starts gets ours (found by the levels property run).
            handOvers[key] = HandOver(index: index, at: now, muted: muted, toOurs: false, byLevelWrite: true)
        } else if let key, let flight = handOvers[key], flight.byLevelWrite, flight.index == index {
            // The same stream's next write (the ramp's next step) saves its mute again: a start that overtakes
            // it has the step before's, that stream's mute, not ours (found by the levels property run: a
            // user's muted music ducked in steps just after the policy faded another out; a start that
            // overtook the last step, at the step before's level with the user's mute, was taken for one
            // with ours and unmuted).
            handOvers[key] = nil
        } else if let key, handOvers[key]?.toOurs == true {
            // A later write of the key (the ramp's next step, another stream's): a start that overtakes it
            // has the write before's, ours (found by the levels property run: a restore's second step
            // overtaken, the start kept our mute).
            handOvers[key] = nil
        } else if !wasOurs, usersMuted, let key, writes.savedMuteMayBeOurs(key: key) {
            // From a mute its users set to ours: on WirePlumber a fade-out's first step saves the faded
            // stream's mute, and the key's is ours from then on; until the server has applied the write, a
            // muted start has its user's (found by the levels property run: its user muted one stream of the
            // key, the policy faded another out, and a third that started in the same moment was unmuted).
            handOvers[key] = HandOver(index: index, at: now, muted: nil, toOurs: true)
        }
        notePending(key, now: now)
        return changed
    }

    /// Recovery or a saved start's correction wrote stream `index`'s own level back: like any write, a stream that ends a moment later
    /// gets its entry repaired (``EndRepair/lateWrite``). What the server saves with it
    /// counts at once for the streams that start later, never for those present at the connection, which
    /// are judged against what was saved before it (found by the levels property run: a stream that started
    /// with an earlier run's mute, taken for one its user muted).
    /// `heldMuted`: the stream stays muted for the policy (its output went away): the server saves that
    /// mute, ours, with the level, and the key's saved mute is ours again (found by the levels property run:
    /// a stream started after it was taken for one its user muted; and, counted for the streams present, the
    /// user's own mute of a stream present taken for ours).
    /// `usersMute`: the stream's mute as its user has it once the writes sent with this one are applied;
    /// the key's as its users have it (``usersMutes``) from now on, where the server saves it with the
    /// level. `recovery`: recovery's write, whose saved mute, if the server saves it, is the user's for the
    /// streams that start later (found by the levels property run: recovery wrote a held stream's
    /// level, then that of a stream its user had muted; the key's saved mute was taken for the held
    /// one's, ours, and a stream that started with it after a second kill was unmuted). Returns whether
    /// the key's saved mute as its users have it changed.
    @discardableResult
    public mutating func wroteOwnLevel(to index: UInt32, key: String?, heldMuted: Bool, usersMute: Bool,
                                       recovery: Bool = false, now: UInt64) -> Bool {
        streams[index, default: StreamLevels()].lastWriteAt = now
        // A later write of the key: a start that overtakes it has our mute, applied before (found by the
        // levels property run: a saved start's correction overtaken just after a fade-out's mute).
        if let key, handOvers[key]?.toOurs == true { handOvers[key] = nil }
        if heldMuted, let key {
            // A start that overtakes the write has the key's mute from before it, which was not ours (found
            // by the levels property run: a stream its app started muted as recovery wrote a held stream's
            // level taken for one with our mute, and unmuted).
            if recovery, saving != nil, !writes.savedMuteMayBeOurs(key: key) {
                recoveryHandOvers.append((key, index, now, true))
            }
            recoverySaved(key, ours: true)
        }
        // A muted stream's mute is one PulseAudio saves (set by a client, or restored), though recovery
        // writes before the stream is heard of.
        guard let saving, saving.savesMuteWithEveryChange || streams[index]?.muteSaved == true || heldMuted || usersMute
        else { return false }
        if recovery, !heldMuted, let key { recoverySaved(key, ours: false) }
        var handedOver = false
        if !recovery, !heldMuted, usersMute, let key, writes.savedMuteMayBeOurs(key: key) {
            // A saved start's correction saves the stream's mute, its user's, over ours: the key's saved mute
            // is theirs from now on, and a start that overtakes the write has ours (found by the levels
            // property run: a stream that started with its user's mute as the policy faded another out,
            // its level put back; the mark of the fade's mute stayed, and the run after a kill unmuted a
            // stream that started with the user's saved mute).
            handedOver = writes.mutesSaved(ours: false, key: key)
            handOvers[key] = HandOver(index: index, at: now, muted: true, toOurs: false)
        }
        return noteSaved(usersMute: heldMuted ? false : usersMute, key: key) || handedOver
    }

    /// Recovery unmuted a stream of `key` the policy had muted: the server saved that as the key's mute, so
    /// streams that start later are not muted by us; the streams present are judged against what was saved
    /// before (``SavedWrites/connectionBegan()``), as some may have started with the earlier run's mute
    /// (found by the levels property run: a stream its app started muted, after the recovery, taken for one
    /// muted by us).
    public mutating func recoveryUnmuted(_ index: UInt32, key: String?, now: UInt64) {
        // In flight for streams that start after the streams present are judged: those present have
        // mutes of their own, set perhaps while no daemon ran (found by the levels property run: a
        // user's mute of a stream present taken for ours and undone).
        if let key, writes.savedMuteMayBeOurs(key: key) { recoveryHandOvers.append((key, index, now, false)) }
        if let key { recoverySaved(key, ours: false) }
        noteSaved(usersMute: false, key: key)
        // A write like any other: a stream that ends a moment later gets its entry repaired, unmuted.
        streams[index, default: StreamLevels()].lastWriteAt = now
        streams[index]?.unmuteSentAt = now
    }

    /// The streams present at a connection were heard of: a stream that starts from now on is judged against
    /// the keys' saved mutes as this run's writes and recovery's left them, and may overtake recovery's
    /// unmutes. Returns the keys whose saved mute recovery's writes handed over (their journal entries must
    /// say so again: a second kill would otherwise lose the mark of a mute that is ours again).
    public mutating func streamsJudged() -> [String] {
        defer {
            savedByRecovery = []
            recoveryHandOvers = []
        }
        writes.presentStreamsJudged()
        guard saving != nil else { return [] }
        // Unless this run wrote the key since (heard first among the present streams): a start overtakes the
        // newest write.
        for (key, index, at, toOurs) in recoveryHandOvers where handOvers[key].map({ $0.at < at }) ?? true {
            // A level write's report shows it applied, whatever mute it has (``HandOver/muted``).
            handOvers[key] = HandOver(index: index, at: at, muted: toOurs ? nil : false, toOurs: toOurs)
        }
        return savedByRecovery.sorted()
    }

    /// Recovery's write saved `key`'s mute: ours (a level under a held mute) or its user's.
    private mutating func recoverySaved(_ key: String, ours: Bool) {
        if writes.mutesSaved(ours: ours, key: key) { savedByRecovery.insert(key) }
        notePending(key)
    }

    /// The level of stream `index` changed (our write or the user's): the server saves its mute with it
    /// as its key's, if it saves mutes with every change (WirePlumber) or this stream's mute is one it
    /// saves (PulseAudio). The key's saved mute is then ours exactly when the policy holds the stream
    /// muted (the soak, on PipeWire: the user's volume change to a stream a call had muted saved that
    /// mute again after our unmute of another stream of the key; the next stream started with it and its
    /// mute was taken for the user's, left muted for good). Returns whether whose the saved mute is changed.
    /// `muted`: the stream's mute as last reported (our unmute sent since, and no one's mute after it, is
    /// taken as applied: the daemon hears of it later). Also returns whether the key's saved mute as its
    /// users have it changed (``usersMutes``).
    public mutating func levelChanged(_ index: UInt32, key: String?, policyMuted: Bool, muted: Bool) -> Bool {
        guard let saving, saving.savesMuteWithEveryChange || streams[index]?.muteSaved == true else { return false }
        defer { notePending(key) }
        let unmutedByUs = streams[index]?.unmuteSentAt != nil
        let users = noteSaved(usersMute: !policyMuted && !unmutedByUs && muted, key: key)
        // Saved with a mute not ours, after our unmute of another stream of the key: whether or not that
        // unmute is ever applied, the key's saved mute is not ours from now on, as after someone's mute
        // (``theyMuted(_:key:muted:)``). Found by the levels property run: its user changed the level of a
        // stream its app had started muted, the daemon was killed before the unmute of another was
        // answered, and after a server restart the next run took the user's saved mute for that lost
        // unmute's and undid it.
        // Called for every ramp step: with no unmute unanswered (the usual case) there is nothing to hash.
        if !policyMuted, !unansweredUnmutes.isEmpty, let key, let unmute = unansweredUnmutes[key], unmute.index != index {
            unansweredUnmutes[key] = nil
        }
        return writes.mutesSaved(ours: policyMuted, key: key) || users
    }

    /// A newer snapshot of stream `index` (any change: a level, a move, a cork, its properties).
    /// PulseAudio saves a stream's mute again with *every* change of a stream whose mute it saves (the
    /// soak, on PulseAudio: a call's mute saved again when the server moved the muted music off a headset
    /// that went away, after our unmute of another stream had made the key's saved mute no longer ours;
    /// the next streams started with it and were taken for the user's, left muted). WirePlumber saves
    /// with a change of the level: ours goes through ``wrote(_:to:key:own:policyMuted:now:)``, someone
    /// else's is `theirLevel`. Returns whether whose the key's saved mute is changed.
    public mutating func streamChanged(_ index: UInt32, key: String?, theirLevel: Bool, policyMuted: Bool,
                                       muted: Bool) -> Bool {
        guard let saving else { return false }
        if saving.savesMuteWithAnyChange { return levelChanged(index, key: key, policyMuted: policyMuted, muted: muted) }
        return theirLevel && levelChanged(index, key: key, policyMuted: policyMuted, muted: muted)
    }

    /// A mute or unmute written to stream `index` at `now`, which the server saves as its key's mute.
    public mutating func wroteMute(_ muted: Bool, to index: UInt32, key: String?, now: UInt64) {
        let wasOurs = key.map { writes.savedMuteMayBeOurs(key: $0) } ?? false
        streams[index, default: StreamLevels()].muteSaved = true
        writes.wroteMute(muted, key: key)
        // Our mute is the policy's; our unmute undoes one of ours (or the server's start with ours).
        noteSaved(usersMute: false, key: key)
        key.map { unansweredUnmutes[$0] = wasOurs && !muted ? (index, now) : nil }
        if wasOurs, !muted, let key {
            handOvers[key] = HandOver(index: index, at: now, muted: false, toOurs: false)
        } else if !muted, let key, handOvers[key]?.toOurs == true {
            handOvers[key] = nil
        } else if muted, let key {
            // Ours now: a start before the write is applied has the mute saved before, never ours: someone
            // else's if they had muted the key (found by the levels property run: a user's mute of another
            // stream of the key, overtaken by a stream that started as we faded the music out, taken for
            // ours), its app's on PulseAudio, which restores only a muted entry's mute to a stream that sets
            // its own level (the property run: an app's muted start as we faded another stream of its key
            // out, unmuted); or the fade's first step handed it over from theirs and is still in flight
            // (``wrote(_:to:key:own:policyMuted:muted:now:)``).
            let fromTheirs = !wasOurs
                || handOver(of: key, now: now).map { $0.toOurs && $0.index == index } == true
            let overAnUnmute = !mutedByThem.contains(key) && usersMutes[key] != true
            handOvers[key] = fromTheirs
                ? HandOver(index: index, at: now, muted: true, toOurs: true, overAnUnmute: overAnUnmute) : nil
        }
        // Sent with the level write that handed the saved mute over (an unmute's batch: its fade-in's first
        // step, the unmute, its level): the handing over is this write's, and the stream's next write is
        // of its batch (found by the levels property run: a start that overtook the batch kept our mute).
        if let key, handOvers[key]?.index == index { handOvers[key]?.byLevelWrite = false }
        key.map { _ = mutedByThem.remove($0) }
        // A write like any other: a stream that ends a moment later gets its entry repaired (found by the
        // levels property run: a saved start's unmute lost as the stream ended left our mute saved).
        streams[index, default: StreamLevels()].lastWriteAt = now
        streams[index]?.unmuteSentAt = muted ? nil : now
        notePending(key, now: now)
    }

    /// Someone else muted or unmuted stream `index` (`muted`): its key's saved mute is theirs.
    public mutating func theyMuted(_ index: UInt32, key: String?, muted: Bool) {
        noteSaved(usersMute: muted, key: key)
        if let key {
            handOvers[key] = nil
            unansweredUnmutes[key] = nil
            if muted { mutedByThem.insert(key) } else { mutedByThem.remove(key) }
        }
        streams[index, default: StreamLevels()].muteSaved = true
        writes.theyMuted(key: key)
        streams[index]?.unmuteSentAt = nil
        notePending(key)
    }

    /// The server reported stream `index` as it is now (any change): a write of ours that handed its
    /// key's saved mute over, which it shows applied (the stream's mute as that write left it), is no
    /// longer in flight.
    public mutating func seen(_ index: UInt32, key: String?, muted: Bool) {
        guard let key, let flight = handOvers[key], flight.index == index, flight.muted ?? muted == muted else { return }
        handOvers[key] = nil
    }

    /// The server has answered every write sent before `time` (µs): our unmutes among them are applied
    /// and saved. Returns the keys whose unanswered unmute that was: the journal's marks of the key's
    /// streams the policy mutes must say so (``savedMuteMark(of:key:policyMuted:unmuteInFlight:)``).
    public mutating func writesAnswered(sentBefore time: UInt64) -> [String] {
        let answered = unansweredUnmutes.filter { $0.value.at < time }.map(\.key).sorted()
        for key in answered { unansweredUnmutes[key] = nil }
        return answered
    }

    // MARK: - Across runs

    /// Streams ducked now (their journal entries): the levels their ducks settle at outlive the run
    /// (``SavedWrites/rememberSettled(_:)``). Returns whether one was new (the daemon keeps them in a file).
    public mutating func rememberSettled(_ streams: [WrittenStream]) -> Bool {
        var changed = false
        for stream in streams { changed = writes.rememberSettled(stream) || changed }
        return changed
    }

    /// What an earlier run remembered (``settledDucks``), taken back at start.
    public mutating func rememberSettled(_ ducks: [SettledDuck]) {
        writes.rememberSettled(ducks)
    }

    /// The settled ducks remembered, for the next run.
    public var settledDucks: [SettledDuck] { writes.settledDucks }

    /// What an earlier run (or a server that went away) left changed, before its streams are restored:
    /// what it wrote may be saved too.
    /// `now`: when (µs); a start at a balanced step of its ramps counts as ours for ``lateWriteWindow``
    /// (``balancedStepsUntil``).
    /// `gone`: the indexes of those no longer present; `present`: every stream on the server now, by
    /// index, with its mute (nil: not known); `savedMuted`: the keys whose saved entry the server has
    /// muted now (nil: not known). A mark kept for an unmute in flight (``SavedMuteMark/ifUnmuteLost``)
    /// counts only when the stream it waits on is gone and its key is saved muted: its unmute was lost
    /// with it (a stream still there applied it; one that ended later saved it). A mark of a stream still
    /// there and no longer muted does not count: someone unmuted it since (a recovery killed before its
    /// answer, whose entries the journal keeps), and the server saved that for its key; nor one of a
    /// stream gone whose key is saved unmuted now, on a server whose read-back is what it gives new
    /// streams (PulseAudio): a repair of the key was applied since.
    public mutating func recovered(_ streams: [WrittenStream], gone: Set<UInt32> = [], present: [UInt32: Bool]? = nil,
                                   savedMuted: Set<String>? = nil, now: UInt64? = nil) {
        repairing = []
        // The earlier run on this instance saw every stream up to its marks: the marks this run journals stay
        // above them, even before it has heard of them all (found by the levels property run: a mark
        // journaled while the streams present were heard in index order fell below a stream its app had
        // started muted, and the run after the next kill took that mute for ours).
        for mark in streams.compactMap(\.savedMute) where !mark.isOfAnotherInstance(than: server) {
            highestIndexSeen = max(highestIndexSeen ?? 0, mark.above)
        }
        let streams = streams.map { stream in
            guard let mark = stream.savedMute else { return stream }
            var stream = stream
            guard mark.ifUnmuteLost else {
                // Found by the levels property run: a recovery's unmute applied, and the run killed before its
                // answer; the run after took the mute an app started a stream with for ours.
                if !gone.contains(stream.index), present?[stream.index] == false { stream.savedMute = nil }
                // Gone, with its key saved unmuted now (where the server reads back what it gives new
                // streams): a repair of the key was applied since, sent by a recovery killed before its
                // answer (found by the levels property run: a server restart, the daemon killed as it
                // reconnected, and a stream its app started muted taken for ours).
                // A stream of the key that started before that repair was applied, at a level of ours, has
                // the entry the repair replaced, and our mute (the levels property run: a fade-out's stream
                // ended, the daemon was killed before its repair's answer, and a stream that overtook the
                // repair at the fade's silence kept our mute for good).
                if gone.contains(stream.index), saving?.readsBackSavedEntries == true, let key = stream.key,
                   savedMuted.map({ !$0.contains(key) }) == true {
                    stream.savedMute?.atOurLevelsOnly = true
                }
                return stream
            }
            let waitedOnGone = mark.unmuteOf.map { other in
                mark.isOfAnotherInstance(than: server) || present.map { $0[other] == nil } == true
            } ?? gone.contains(stream.index)
            let lost = waitedOnGone && stream.key.map { savedMuted?.contains($0) == true } == true
            // Applied (the stream it waited on is there, unmuted): a start that overtook the unmute, at a level
            // of ours, has our mute (found by the levels property run, seed 2689458121451567552 on both
            // servers: the daemon killed as a start overtook its unmute of a faded stream, and the next run
            // left that start muted at the fade's silence); at any other level its mute is someone else's.
            let applied = !mark.isOfAnotherInstance(than: server) && present?[mark.unmuteOf ?? stream.index] == false
            if !lost {
                stream.savedMute = applied ? SavedMuteMark(above: mark.above, server: mark.server, atOurLevelsOnly: true) : nil
            }
            return stream
        }
        writes.recovered(streams, server: server)
        for stream in streams {
            if let key = stream.key, let mute = stream.keyUsersMute { usersMutes[key] = mute }
            // Recovery's write of its level saves its mute (found by the levels property run: the restore of
            // a stream whose start's mute the dead run had undone saved that unmute as the key's, and the
            // repair of a held stream of the key wrote another stream's mute of its user's over it).
            if stream.muteSaved, !gone.contains(stream.index), stream.mayPlay(on: server) {
                self.streams[stream.index, default: StreamLevels()].muteSaved = true
            }
        }
        balancedStepsUntil = streams.isEmpty ? nil : now.map { $0 + Self.lateWriteWindow }
    }

    /// What recovery made of the earlier run's saved-mute marks (``SavedWrites/earlierMuteMarks``).
    public var earlierMuteMarks: [String: Int64] { writes.earlierMuteMarks }

    // MARK: - A new stream

    /// Where a new stream's start (`volume`, `muted`) came from, if the server gave it a level or mute of
    /// ours. Nil while its volume is not known (`volumeKnown`: pipewire-pulse tells it late). A muted start
    /// at `now`, while a write of ours that handed its key's saved mute over is not yet reported applied
    /// (at most ``lateWriteWindow``), has the mute saved before that write (``handOvers``); one whose volume
    /// came late, a mute its key had at some moment since its announcement (``PendingMute``); one heard of
    /// just after a repair of its key's entry over our mute, announced at `announcedAt`, may have the mute
    /// that repair replaced (``overtakenRepair(of:volume:index:announcedAt:now:)``).
    public func origin(of index: UInt32, key: String?, volume: ChannelVolumes, muted: Bool,
                       volumeKnown: Bool, announcedAt: UInt64? = nil, now: UInt64) -> StartOrigin? {
        // The streams present at a connection started before this run wrote anything: no write of it in
        // flight tells where their mute came from (the 120 s churn on both servers: a call present faded the
        // music heard first, the music heard next was muted at once, and a stream heard after them, which had
        // started with the dead run's mute, was taken for one that overtook that mute and got its user's).
        let atSilence = volume.values.allSatisfy { $0 == 0 }
        let savedBefore = streams[index]?.pending.map { pending in
            pending.merged(savedMute(of: pending.key, index: index, now: now)).mutedByUs(
                ourLevel: atSilence
                    || writes.origin(of: volume, muted: false, key: key, index: index) != nil)
        } ?? (writes.judgingPresent ? nil : key.flatMap { handOver(of: $0, now: now) }.map { flight in
            // Our mute over a saved unmute: a muted start at the fade's silence has ours (the 120 s churn on
            // PipeWire, seed 7331: such a start taken for one that overtook the mute, its mute for its
            // user's, and the key's saved mute after its level was put back for its user's too).
            !flight.toOurs || (flight.overAnUnmute && muted && atSilence)
        })
            ?? (muted ? key.flatMap { overtakenRepair(of: $0, volume: volume, index: index, announcedAt: announcedAt,
                                                      now: now) } : nil)
        guard saving != nil, volumeKnown,
              var origin = writes.origin(of: volume, muted: muted, key: key, index: index, mutedByUs: savedBefore,
                                         balancedSteps: balancedStepsUntil.map { now < $0 } ?? false),
              origin.own.channels == volume.channels else { return nil }
        // A level remembered from an earlier run has no channel map: the stream's is the one.
        if origin.own.channelMap.isEmpty { origin.own.channelMap = volume.channelMap }
        return origin
    }

    /// Whether a muted start of `key` at `volume`, announced at `announcedAt`, has the mute of ours that a
    /// repair of the key's entry, taken less than ``lateWriteWindow`` before `now`, wrote over
    /// (``repairsOverOurMute``); nil when no such repair is that recent, or the start has the repair's.
    /// PulseAudio: a stream announced before the answer started before the repair. WirePlumber: any start
    /// may have the entry it replaced; muted where the repair wrote unmuted, it has; where the repair wrote
    /// the user's mute, a start at a level we wrote for the key (a fade-out's silence, a duck: the entry
    /// our mute was saved with) has ours, one at any other level the repair's.
    private func overtakenRepair(of key: String, volume: ChannelVolumes, index: UInt32, announcedAt: UInt64?,
                                 now: UInt64) -> Bool? {
        guard let repair = recentRepair(of: key, now: now), let saving else { return nil }
        if saving.appliesEntriesBeforeAnswering { return announcedAt.map { $0 < repair.at } == true ? true : nil }
        let ourLevel = writes.origin(of: volume, muted: false, key: key, index: index) != nil
        // Muted at none of the levels the repairs wrote muted, it has the entry from before them, with our
        // mute (found by the levels property run: recovery's repairs after a server restart, overtaken by a
        // start at the level a restore had put back under the policy's mute, which WirePlumber saved with
        // it, and which the first repair wrote unmuted).
        let beforeTheRepairs = repair.written.map { written in
            !written.contains { $0.muted && volume.matches($0.level, tolerance: 2) }
        }
        return !repair.muted || ourLevel || beforeTheRepairs == true ? true : nil
    }

    /// The repair of `key`'s entry over our mute taken less than ``lateWriteWindow`` before `now`, if any
    /// (``repairsOverOurMute``).
    private func recentRepair(of key: String, now: UInt64) -> RepairOverOurMute? {
        repairsOverOurMute[key].flatMap { now &- $0.at < Self.lateWriteWindow ? $0 : nil }
    }

    /// The write of ours in flight that handed `key`'s saved mute over at `now`, if any (``handOvers``).
    private func handOver(of key: String, now: UInt64) -> HandOver? {
        handOvers[key].flatMap { now &- $0.at < Self.lateWriteWindow ? $0 : nil }
    }

    // MARK: - Repairs

    /// Whether a stream that ended needs its saved entry repaired though nothing is on record for it
    /// (``EndRepair/lateWrite``).
    private func lateWriteNeedsRepair(_ index: UInt32, now: UInt64) -> Bool {
        guard saving != nil, !repairing.contains(index), let written = streams[index]?.lastWriteAt else {
            return false
        }
        return now &- written < Self.lateWriteWindow
    }

    /// What a saved entry of `key` at `saved` must be repaired to, if it is a level some run's ducks
    /// settled at: a server that keeps only what held for a second (WirePlumber) brings such a level
    /// back when it restarts, long after the stream and its repair (found by the levels property run;
    /// the soak saw the next stream start at it). Nil for any other level.
    public func settledRepair(key: String, saved: ChannelVolumes) -> ChannelVolumes? {
        guard saving != nil else { return nil }
        return writes.settledOwn(key: key, volume: saved)
    }

    /// The mute a repair writes as `stream`'s key's entry, which holds `saved` now: the user's, never the
    /// policy's. A stream the policy did not mute had no mute of ours written, so unless the key's saved
    /// mute may be ours (another stream's), the entry's mute is its user's latest — perhaps set while no
    /// daemon ran, after the journal was written — and is kept (found by the levels property run: the
    /// user's mute of a ducked stream made while the daemon was dead, undone by the next run's repair),
    /// where the server's read-back can be trusted. Not for a stream that ended just after our unmute:
    /// the read-back may be the mute that unmute never undid (the 120 s soak on PulseAudio: an app faded
    /// out for a call quit as the call ended, and its key's entry was repaired muted).
    public func repairMute(of stream: WrittenStream, saved: Bool?) -> Bool {
        guard !unmuteMayBeLost.contains(stream.index), saving?.readsBackSavedEntries == true, !stream.policyMuted, let saved, let key = stream.key, !writes.savedMuteMayBeOurs(key: key) else {
            var stream = stream
            if stream.policyMuted, let key = stream.key, let mute = usersMutes[key] { stream.keyUsersMute = mute }
            return stream.savedEntryMute
        }
        return saved
    }

    /// A repair of `key`'s entry was taken: its mute is the user's now, whatever it was (found by the
    /// levels property run: a stream whose app started it muted, after the repair of a call's mute, was
    /// taken for one muted by us and unmuted). Returns whether the key's saved mute was ours until then:
    /// the journal's entries of the key's streams must then drop their ``SavedMuteMark`` (found by the
    /// levels property run: a mark left above the repair made the next run unmute a stream that started,
    /// while no daemon ran, with its user's mute of the key — and save that unmute as the key's).
    /// `muted`, `level`: the mute and level it wrote; `now` (µs), when known: a start that overtakes the
    /// repair may still get the entry it replaced (``repairsOverOurMute``).
    @discardableResult
    public mutating func entryRepaired(key: String, muted: Bool = false, level: ChannelVolumes? = nil,
                                       now: UInt64? = nil) -> Bool {
        // What it wrote is the key's mute now, not an unmute of ours in flight (found by the levels
        // property run: a gone stream's repair put back its user's mute after recovery's unmute of
        // another, and a stream that started with it was taken for one muted by us).
        // An unmute of ours not yet applied left our mute saved before the repair, as our own mute does.
        let unmuteInFlight = now.flatMap { handOver(of: key, now: $0) }.map { !$0.toOurs } ?? false
        handOvers[key] = nil
        unansweredUnmutes[key] = nil
        // Noted at `now`: a stream waiting for its volume may have the entry from before the repair (ours,
        // on WirePlumber, until it applies the repair) or the repair's mute, never an older one.
        defer { notePending(key, now: now) }
        let wasOurs = writes.theyMuted(key: key)
        let overLostUnmute = repairsOverLostUnmute.remove(key) != nil
        // A later repair of the key (recovery's of several gone streams, one batch) writes over the first: a
        // start that overtakes them has the mute from before the first, and the last one's is the entry's.
        if let now {
            let earlier = recentRepair(of: key, now: now)
            let this = level.map { (level: $0, muted: muted) }
            let written = earlier.map { $0.written.flatMap { written in this.map { written + [$0] } } } ?? this.map { [$0] }
            repairsOverOurMute[key] = wasOurs || unmuteInFlight || overLostUnmute || earlier != nil
                ? RepairOverOurMute(at: earlier?.at ?? now, muted: muted, written: written) : nil
        }
        return wasOurs
    }

    /// A repair of `key`'s entry is sent, writing `muted` over `saved` (the entry's mute as read back, or
    /// as the repairs sent before this one left it): a mute it changes is its users' from now on
    /// (``usersMutes``); one it keeps is theirs as it was. Returns whether the key's saved mute as its
    /// users have it changed (the journal's entries of the key's streams the policy mutes carry it).
    @discardableResult
    /// `index`: the stream whose entry it is. If that stream ended within ``lateWriteWindow`` of our
    /// unmute (``unmuteMayBeLost``) and the entry reads back muted, the unmute was lost and the mute the
    /// repair writes over is ours: a start that overtakes the repair has it (``repairsOverOurMute``).
    public mutating func repairSent(key: String, muted: Bool, over saved: Bool?, for index: UInt32? = nil) -> Bool {
        if saved == true, index.map({ unmuteMayBeLost.contains($0) }) == true { repairsOverLostUnmute.insert(key) }
        guard saved != muted else { return false }
        return noteSaved(usersMute: muted, key: key, byRepair: true)
    }

    /// Repairs of these streams' entries went out; until they are answered their end needs no other.
    public mutating func repairsSent(_ indexes: [UInt32]) {
        repairing.formUnion(indexes)
    }

    /// The server answered (or the connection went) for repairs of these streams.
    public mutating func repairsAnswered(_ indexes: [UInt32]) {
        repairing.subtract(indexes)
    }
}
