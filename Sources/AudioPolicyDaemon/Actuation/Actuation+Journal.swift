import AudioPolicy
import EventLoop
import FoundationEssentials
import FoundationGaps
import Glibc
import Logging
import SoundBackend

/// The crash-safe journal in actuation: written before a stream is changed, cleared once it is put
/// back, and replayed after a crash or a sound server restart so nothing stays ducked or muted.
extension Actuation {
    // MARK: - Start and stop

    /// Reads what an earlier run left: those entries are undone once the server's streams are known.
    func openJournal() {
        guard let store = journal.store else { return }
        if let signal = store.durableCopySignal {
            durableCopyWatch = MainLoop.IOWatch(loop: loop, fd: signal, events: .readable) { [unowned self] _ in
                switch self.journal.durableCopyChecked() {
                case let .failed(message): self.report(message)
                case .writtenAgain: self.log.notice("journal: the durable copy is written again (\(store.durableCopy ?? ""))")
                case nil: break
                }
            }
        }
        let file = store.readPath
        switch store.load() {
        case .empty:
            break
        case let .entries(entries):
            _ = journal.beginRecovery(adding: entries)
            log.info("journal: an earlier run left \(entries.count) stream(s) changed; restoring them once connected (\(file))")
        case let .cutShort(entries):
            _ = journal.beginRecovery(adding: entries)
            log.warning("journal \(file): its last record was cut short (the machine stopped while writing it?); using the one before: \(entries.count) stream(s) left changed, restoring them once connected")
        case let .corrupt(reason, setAside):
            let fate = setAside.map { "set aside as \($0)" } ?? "removed"
            log.warning("journal \(file) is unreadable (\(reason)); \(fate); starting without it: a stream an earlier run left ducked or muted must be restored by hand")
        }
    }

    /// A clean stop: what could be put back has been. Streams held paused are left to the user (as a
    /// clean stop leaves them), so their entries go; entries of a server that is gone stay for next time.
    func closeJournal() {
        if settledDuckTimer?.isScheduled == true { saveSettledDucks() }
        guard let server, server.isReady else { return }
        for index in journal.entries.keys.sorted() where streams[index] != nil && !isVolumeAltered(index) {
            report(journal.remove(index))
        }
    }

    // MARK: - Before and after acting

    /// Call before the first change to a stream, and whenever what it was changes (the user's own
    /// volume under a duck, the user muting it): records the stream as it stands, if it is changed.
    /// Writes the file only when the entry differs from the one on record.
    func journalSync(_ index: UInt32) {
        guard let live = streams[index] else { return }
        let players = journal[index]?.pausedPlayers ?? []
        guard isVolumeAltered(index) || !players.isEmpty else {
            removeOnceAnswered(index, live)
            return
        }
        removalsAwaitingAnswer.remove(index)
        let entry = journalEntry(of: live, pausedPlayers: players)
        report(journal.record(entry))
        if live.level.factor < 1 { restore?.rememberSettled([entry.written]) }
    }

    /// The stream is back as its user had it: its entry goes once the server has answered the writes
    /// that put it back, kept meanwhile as the stream stands (its user's level and mute). Those writes
    /// are lost if the stream ends before the server applies them, and its key's saved entry keeps the
    /// step before; after a SIGKILL in between, only the entry tells the next run to repair it (found by
    /// the levels property run, with a stream's last writes lost after a kill). Costs one drain of the
    /// connection per stream put back; the entry is written again only if it changed.
    private func removeOnceAnswered(_ index: UInt32, _ live: LiveStream) {
        guard journal[index] != nil else { return }
        guard let server, server.isReady else {
            report(journal.remove(index))
            return
        }
        report(journal.record(journalEntry(of: live, pausedPlayers: [])))
        guard removalsAwaitingAnswer.insert(index).inserted else { return }
        server.drain { [weak self] in
            guard let self, removalsAwaitingAnswer.remove(index) != nil else { return }
            report(journal.remove(index))
        }
    }

    /// The server answered the writes sent to the stream before `time`: an unmute of the policy's among
    /// them no longer keeps its mute on record.
    func unmuteAnswered(_ index: UInt32, sentBefore time: UInt64) {
        var answered = false
        update(index) { answered = $0.level.writesAnswered(sentBefore: time) }
        if answered { journalSync(index) }
    }

    /// The stream's entry as it stands, with the run's duck levels and where its key's saved mute is ours.
    func journalEntry(of live: LiveStream, pausedPlayers: [String]) -> JournalEntry {
        live.journalEntry(pausedPlayers: pausedPlayers, duckLevels: duckLevels, book: savedLevelsBook)
    }

    /// The journal entries of streams of `key` the policy holds muted are written again: whether the
    /// key's saved mute is ours, or the highest index seen, changed (``JournalEntry/savedMuteAbove``).
    /// Touches the file only while the policy mutes a stream of the key, and only if an entry changed.
    func journalSavedMute(of key: String?) {
        guard let key else { return }
        for (index, entry) in journal.entries where entry.restoreID == key && entry.policyMuted {
            guard streams[index] == nil else {
                journalSync(index)
                continue
            }
            // Ended, kept until the server has answered its repair: its mark as it stands now
            // (``LevelOwnership/savedMuteMark(ofEnded:)``).
            var marked = entry
            marked.markSavedMute(savedLevelsBook.savedMuteMark(ofEnded: entry.written))
            if marked != entry { report(journal.record(marked)) }
        }
    }

    /// A journal log grown long is compacted on a later turn of the loop, once the requests of the change
    /// that grew it have been written to the server: its file is written and synced, off the path from a
    /// new stream to its duck.
    func compactJournalLater() {
        guard journal.store?.compactionDue == true else { return }
        if compactionTimer == nil {
            compactionTimer = MainLoop.Timer(loop: loop) { [unowned self] in self.report(self.journal.compactIfDue()) }
        }
        compactionTimer?.schedule(after: 0)
    }

    /// Encodes the stream's entry ahead, as its first change would record it, so that recording it then
    /// costs one `write(2)`. Call after the stream's news was acted on.
    ///
    /// The encoding (about 50 µs) is done on a later turn of the loop: libpulse writes the requests a
    /// stream's news led to (a prompt's ducks) once the callback that told the news returns, so encoding
    /// there would hold them back. A change recorded before then encodes its entry itself.
    func prepareJournalEntry(_ index: UInt32) {
        guard journal.store != nil else { return }
        entriesToPrepare.insert(index)
        if preparationTimer == nil {
            preparationTimer = MainLoop.Timer(loop: loop) { [unowned self] in self.prepareJournalEntries() }
        }
        preparationTimer?.schedule(after: 0)
    }

    private func prepareJournalEntries() {
        let indexes = entriesToPrepare
        entriesToPrepare = []
        guard let store = journal.store else { return }
        for index in indexes.sorted() {
            guard let live = streams[index] else { continue }
            store.prepare(journalEntry(of: live, pausedPlayers: journal[index]?.pausedPlayers ?? []))
        }
    }

    /// Before asking `player` to pause for the stream.
    func journalPausing(_ index: UInt32, player: PlayerID) {
        guard let live = streams[index] else { return }
        var entry = journal[index] ?? journalEntry(of: live, pausedPlayers: [])
        guard !entry.pausedPlayers.contains(player.rawValue) else { return }
        entry.pausedPlayers.append(player.rawValue)
        report(journal.record(entry))
    }

    /// After asking `player` to play again (or when the pause is no longer ours to undo).
    func journalResumed(_ index: UInt32, player: PlayerID) {
        guard var entry = journal[index], entry.pausedPlayers.contains(player.rawValue) else { return }
        entry.pausedPlayers.removeAll { $0 == player.rawValue }
        if entry.pausedPlayers.isEmpty, !isVolumeAltered(index) {
            report(journal.remove(index))
        } else {
            report(journal.record(entry))
        }
    }

    /// Whether the daemon's changes to the stream's volume or mute are in force (or on their way back).
    /// Nothing is written to a stream whose volume the server has not told (``LateVolume``): nothing of
    /// it is on record until then; what the engine asked for meanwhile is, before it is written.
    func isVolumeAltered(_ index: UInt32) -> Bool {
        guard let live = streams[index] else { return false }
        return live.level.isChanged(mutedNow: live.input.muted, writable: live.writable,
                                    volumePending: live.input.volumePending, ramping: ramps.running[index] != nil)
    }

    /// The stream is gone (after the engine heard of it). Its saved entry still holds what we wrote
    /// unless a repair is under way: with `repair` (``EndRepair/journaled``), it is repaired from the
    /// journal. With the server gone, nothing can be written: the entry stays for the reconciliation
    /// after reconnecting.
    func journalStreamGone(_ index: UInt32, repair: Bool) {
        removalsAwaitingAnswer.remove(index)
        guard repair, let entry = journal[index] else { return }
        guard let server, server.isReady else { return }
        guard entry.restoreID != nil, !entry.volume.isEmpty else {
            report(journal.remove(index))
            return
        }
        repairSaved([entry]) { [weak self] _ in self?.report(self?.journal.remove(index)) }
    }

    /// Writes each entry's own level and mute back as its key's saved entry (the pulse backend's repair,
    /// ``SavedLevelsBook/repair(_:completion:)``), then calls `completion` with the connection the writes
    /// went to; at once on a backend that saves nothing.
    func repairSaved(_ entries: [JournalEntry], then completion: @escaping (any StreamServer) -> Void) {
        guard let restore else {
            if let server { completion(server) }
            return
        }
        restore.repair(entries.map(\.written), completion: completion)
    }

    /// A repair of the stream's saved entry has been sent (by the engine's `repairSaved`).
    func journalRepairSent(_ index: UInt32) {
        report(journal.remove(index))
    }

    // MARK: - Settled ducks, across runs

    /// Reads the settled ducks earlier runs kept (``SettledDuckFile``) into the backend's saved-level
    /// bookkeeping, and keeps the file up to date from then on. Once, at the first connection of a
    /// backend that has saved levels; nothing without a journal file.
    func keepSettledDucks() {
        guard let restore, !settledDucksRead, let store = journal.store else { return }
        settledDucksRead = true
        let path = SettledDuckFile.path(besides: store)
        if let ducks = SettledDuckFile.load(path) {
            restore.rememberSettled(ducks)
        } else {
            log.warning("\(path) is unreadable; starting without the levels earlier runs' ducks settled at (it is written again at the next duck)")
        }
        restore.onSettledChange = { [unowned self] in self.saveSettledDucksLater() }
    }

    /// A new settled duck: the file is written in a few seconds, with whatever more came by then.
    func saveSettledDucksLater() {
        if settledDuckTimer == nil {
            settledDuckTimer = MainLoop.Timer(loop: loop) { [unowned self] in self.saveSettledDucks() }
        }
        if settledDuckTimer?.isScheduled != true { settledDuckTimer?.schedule(after: 3_000_000) }
    }

    func saveSettledDucks() {
        settledDuckTimer?.cancel()
        guard let restore, let store = journal.store else { return }
        let path = SettledDuckFile.path(besides: store)
        do {
            try SettledDuckFile.save(restore.settledDucks, to: path)
        } catch {
            log.error("cannot write \(path): \(errorMessage(error))")
        }
    }

    func report(_ failure: String?) {
        if let failure { log.error("\(failure)") }
    }
}
