import AudioPolicy
import EventLoop
import Logging
import SoundBackend

/// What the server said of a sink input, taken into the stream table (server intake calls these around
/// telling the engine).
extension Actuation {
    /// Whether a new stream started at a level the server saved from one of our writes to another stream
    /// of its key (``SavedWrites``).
    struct SavedStart {
        /// Its own level is the one under our write, not the level it started at.
        var adopted = false
        /// Its mute, too, came from us (a fade-out's end, an instant mute), so it is not the user's.
        var mutedByUs = false
        /// It started away from its own level and can be written: the engine may have it put back
        /// (``Event/startedAtOurSave(_:levelAway:mutedByUs:)``).
        var levelAway = false
        /// An earlier run held it muted for a lost output, and recovery kept it so: the engine holds it on.
        var held = false
    }

    /// A new sink input, its record just begun (``LiveStreams/begin(_:on:sandbox:)``), before the engine
    /// hears of it.
    func streamAppeared(_ input: SinkInput) -> SavedStart {
        log.debug("stream \(input.index) (\(input.applicationName ?? "?")) appeared \(Self.levelText(input)), key \(input.restoreID ?? "none")")
        let held = recoveredHolds.remove(input.index) != nil && input.muted
        if held { update(input.index) { $0.level.heldByRecovery() } }
        if unmutedByRecovery.indexes.remove(input.index) != nil, !input.muted {
            let sent = unmutedByRecovery.sentAt
            update(input.index) { $0.level.unmutedByRecovery(at: sent) }
        }
        if putBackByRecovery.remove(input.index) != nil, let live = streams[input.index] {
            report(journal.record(journalEntry(of: live, pausedPlayers: [])))
            journalSync(input.index)
        }
        let savedMuteOurs = restore?.streamAppeared(input) ?? false
        // On record again at once: a second crash must find it held too.
        if held {
            journalSync(input.index)
            return SavedStart(held: true)
        }
        // Seen: the journal's entries of its key, if the policy's mute is that key's saved one, must keep
        // it known (and its own mute, if it has one, the user's) should this run end.
        if savedMuteOurs { journalSavedMute(of: input.restoreID) }
        guard let origin = savedOrigin(input.index) else { return SavedStart() }
        update(input.index) { $0.level.own = origin.own }
        return SavedStart(adopted: origin.needsCorrection(startedAt: input.volume), mutedByUs: origin.mutedByUs,
                          levelAway: Self.levelAway(input, own: origin.own))
    }

    /// The engine has heard of a new stream's start (or of its late volume) and what it asked for is
    /// done: the stream counts as seen, and the journal's marks of its key go above it
    /// (``LevelOwnership/startJudged(_:)``). Not before: a kill between its appearance and the put-back
    /// of a start at our mute must leave the next run a stream above the marks.
    func startJudged(_ index: UInt32) {
        guard let live = streams[index], !live.input.volumePending else { return }
        if restore?.startJudged(index) == true { journalSavedMute(of: live.input.restoreID) }
    }

    /// Whether `input` is away from its own level `own` and can be written back to it.
    private static func levelAway(_ input: SinkInput, own: ChannelVolumes) -> Bool {
        input.volumeWritable && !input.volume.matches(ChannelVolumes(values: own.values, channelMap: input.volume.channelMap))
    }

    /// A newer snapshot of a known sink input, before the engine hears of it; the server telling the
    /// volume late (pipewire-pulse) is taken as the levels stage says (``LateVolume``). Returns the
    /// snapshot before, and, when the volume came late, where that late start came from (its mute comes
    /// with it, and is the user's unless it is ours).
    func streamChanged(_ input: SinkInput) -> (before: SinkInput, lateStart: SavedStart?)? {
        guard let old = streams[input.index]?.input else { return nil }
        if input.levelChange == .theirs, let live = streams[input.index] {
            log.debug("stream \(input.index): changed by someone else, \(Self.levelText(old)) -> \(Self.levelText(input)) (own \(live.level.own), factor \(live.level.factor))")
        }
        restore?.seen(input)
        // Someone else's volume becomes the stream's own when the engine says so (``Command/adoptLevel(_:)``,
        // ``Command/yieldVolume(_:)``).
        update(input.index) { $0.input = input }
        let lateStart = old.volumePending && !input.volumePending ? volumeArrived(input.index) : nil
        // The server saves the mute again with the change: with a level someone else set, as it does with
        // ours, and on PulseAudio with any change of a stream whose mute it saves (a move, a cork).
        if lateStart == nil, let live = streams[input.index],
           restore?.streamChanged(input, theirLevel: input.levelChange == .theirs && input.theirVolume,
                                  policyMuted: live.level.policyMuted) == true {
            journalSavedMute(of: input.restoreID)
        }
        return (old, lateStart)
    }

    /// Muted or unmuted by someone else: the mute is theirs either way, never the policy's to undo.
    func userMuted(_ index: UInt32) {
        update(index) { $0.level.theyMuted() }
        if let live = streams[index] {
            restore?.theyMuted(live.input)
            journalSavedMute(of: live.input.restoreID)
        }
    }

    /// The sink input is gone, and the engine has heard of it; its record is still there. Returns what
    /// becomes of its journal entry once the record has gone (``streamGone(_:_:)``).
    func streamEnding(_ index: UInt32) -> EndRepair? {
        guard let live = streams[index] else { return nil }
        let end = savedLevelsBook.streamEnded(index, journaled: journal[index] != nil)
        // Neither the engine nor the journal (both count a ramp done once its last step is sent) knows
        // of a last step the server never applied.
        if end == .lateWrite { repairSavedEntry(of: live) }
        stopRamp(index)
        return end
    }

    /// The sink input's record has gone (server intake ended it after ``streamEnding(_:)``): its journal
    /// entry is repaired or let go.
    func streamGone(_ index: UInt32, _ end: EndRepair) {
        journalStreamGone(index, repair: end == .journaled)
        journal.store?.forget(index)
    }

    /// The server told the stream's volume and mute late (pipewire-pulse): the levels stage says what its
    /// own level is and whether its mute is its user's (``LateVolume``). What the engine asked for meanwhile
    /// is the engine's to ask again once it hears of it (``Event/levelTold(_:muted:)``).
    private func volumeArrived(_ index: UInt32) -> SavedStart {
        guard let live = streams[index] else { return SavedStart() }
        log.debug("stream \(index): the server told its level: \(Self.levelText(live.input))")
        let late = LateVolume.arrived(at: live.input.volume, muted: live.input.muted, origin: savedOrigin(index),
                                      policyMuted: live.level.policyMuted)
        if restore?.volumeArrived(live.input) == true { journalSavedMute(of: live.input.restoreID) }
        update(index) { $0.level.own = late.own }
        if late.policyYields {
            // Its user's mute: the engine hears of it (server intake) and gives back what its fade took.
            stopRamp(index)
            update(index) { $0.level.policyYieldsMute() }
        }
        journalSync(index)
        return SavedStart(adopted: late.adopted, mutedByUs: late.mutedByUs,
                          levelAway: Self.levelAway(live.input, own: late.own))
    }

    /// A sink input's level and mute as the debug log shows them.
    static func levelText(_ input: SinkInput) -> String {
        input.volumePending ? "with its level not told yet" : "at \(input.volume)\(input.muted ? ", muted" : "")"
    }

    /// The server saved the ducked or muted level for this app or role (module-stream-restore) when we
    /// wrote it; write the user's own level back so the next stream starts where the user left it.
    /// (The same repair as crash recovery's; the journal entry goes once it is sent.)
    func repairSavedEntry(of live: LiveStream) {
        guard live.input.restoreID != nil, !live.input.volumePending else { return }
        let index = live.input.index
        repairSaved([journalEntry(of: live, pausedPlayers: [])]) { [weak self] _ in self?.journalRepairSent(index) }
    }
}
