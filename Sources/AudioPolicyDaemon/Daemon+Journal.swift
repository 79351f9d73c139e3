import AudioPolicy
import ControlProtocol
import EventLoop
import FoundationEssentials
import Glibc
import Logging
import SoundServer

/// The crash-safe journal in the daemon: written before a stream is changed, cleared once it is put
/// back, and replayed after a crash or a sound server restart so nothing stays ducked or muted.
extension Daemon {
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
        guard let pulse, pulse.isReady else { return }
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
            report(journal.remove(index))
            return
        }
        report(journal.record(live.journalEntry(pausedPlayers: players)))
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
    func prepareJournalEntry(_ index: UInt32) {
        guard let store = journal.store, let live = streams[index] else { return }
        store.prepare(live.journalEntry(pausedPlayers: journal[index]?.pausedPlayers ?? []))
    }

    /// Before asking `player` to pause for the stream.
    func journalPausing(_ index: UInt32, player: PlayerID) {
        guard let live = streams[index] else { return }
        var entry = journal[index] ?? live.journalEntry(pausedPlayers: [])
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
    func isVolumeAltered(_ index: UInt32) -> Bool {
        guard let live = streams[index] else { return false }
        return live.factor != 1 || live.policyMuted || ramps.running[index] != nil
    }

    /// The stream is gone (after the engine heard of it). Its saved entry still holds what we wrote
    /// unless a repair is under way: repair it from the journal. With the server gone, nothing can be
    /// written: the entry stays for the reconciliation after reconnecting.
    func journalStreamGone(_ index: UInt32) {
        guard let entry = journal[index], !journalRepairs.contains(index) else { return }
        guard let pulse, pulse.isReady else { return }
        guard entry.restoreID != nil, !entry.volume.isEmpty else {
            report(journal.remove(index))
            return
        }
        repairSaved([entry]) { [weak self] _ in self?.report(self?.journal.remove(index)) }
    }

    /// A repair of the stream's saved entry has been sent (by the engine's `repairSaved`).
    func journalRepairSent(_ index: UInt32) {
        journalRepairs.remove(index)
        report(journal.remove(index))
    }

    func report(_ failure: String?) {
        if let failure { log.error("\(failure)") }
    }

    // MARK: - Recovery

    /// Undoes every journaled change that is not of this connection: at start (an earlier run's
    /// entries) and after the server came back (this run's entries from the server that went away).
    ///
    /// Streams still there get their own volume back (if nobody set another one meanwhile) and are
    /// unmuted if we muted them; the saved entries of those gone are repaired. Returns the initial
    /// streams as they will be once that is done, so the engine starts from the user's levels.
    /// `completion` runs once the server has taken every write (the journal is cleared then).
    func recoverFromJournal(_ inputs: [SinkInput], completion: @escaping () -> Void) -> [SinkInput] {
        journalRepairs = []
        let entries = journal.beginRecovery()
        // Daemon+SavedWrites: streams that started while no daemon ran may have been given its ducks.
        savedWrites.recovered(entries, duckLevels: engine.policy.classes.values.map(\.duck.linear))
        guard !entries.isEmpty, let pulse else {
            completion()
            return inputs
        }
        var restored = inputs
        var gone: [JournalEntry] = []
        var outcome: [String] = []
        for entry in entries {
            guard let position = restored.firstIndex(where: { entry.describes($0) }) else {
                gone.append(entry)
                continue
            }
            var input = restored[position]
            let name = "stream \(entry.sinkInput) (\(entry.application ?? "?"))"
            if entry.policyMuted, input.muted {
                pulse.setMute(index: input.index, muted: false)
                input.muted = false
                outcome.append("\(name) unmuted")
            }
            if input.hasVolume, input.volumeWritable, !input.volume.matches(entry.ownVolume) {
                if entry.isScaledDown(input.volume) {
                    pulse.setVolume(index: input.index, volumes: entry.ownVolume)
                    outcome.append("\(name) volume \(input.volume) -> \(entry.ownVolume)")
                    input.volume = entry.ownVolume
                } else {
                    outcome.append("\(name) left at \(input.volume) (set by someone else since)")
                }
            }
            for player in entry.pausedPlayers {
                // As after a clean stop: never resumed behind the user's back (a call may still be on).
                outcome.append("\(name): player \(player) was paused for an interruption; left paused")
            }
            restored[position] = input
        }
        for entry in gone where entry.pausedPlayers.isEmpty == false {
            outcome.append("stream \(entry.sinkInput) (\(entry.application ?? "?")) gone; its player "
                + entry.pausedPlayers.joined(separator: ", ") + " was paused for an interruption; left paused")
        }
        let repairable = gone.filter { $0.restoreID != nil && !$0.volume.isEmpty }
        for entry in repairable {
            outcome.append("stream \(entry.sinkInput) (\(entry.application ?? "?")) gone; repairing the saved "
                + "entry \(entry.restoreID ?? "")")
        }
        let summary = outcome.isEmpty ? "nothing to do" : outcome.joined(separator: "; ")
        log.info("journal: restoring \(entries.count) stream(s) left changed: \(summary)")
        let finish: (any StreamServer) -> Void = { [weak self] connection in
            connection.drain { [weak self] in
                guard let self, self.pulse === connection, connection.isReady else { return }
                self.report(self.journal.endRecovery(entries))
                self.log.info("journal: recovery done")
                completion()
            }
        }
        if repairable.isEmpty {
            finish(pulse)
        } else {
            repairSaved(repairable) { connection in finish(connection) }
        }
        return restored
    }

    /// Writes each entry's own volume and mute back as its saved stream-restore entry (keeping the
    /// saved device), then calls `completion` with the connection the writes went to. Nothing is
    /// written, and `completion` is not called, if the connection is lost first.
    func repairSaved(_ entries: [JournalEntry], completion: @escaping (any StreamServer) -> Void) {
        guard let pulse else { return }
        for entry in entries { journalRepairs.insert(entry.sinkInput) }
        pulse.readSavedEntries { [weak self] saved in
            guard let self else { return }
            for entry in entries { self.journalRepairs.remove(entry.sinkInput) }
            guard let connection = self.pulse, connection === pulse, connection.isReady else { return }
            // Done only once the server has taken every write: a repair sent as the server goes away
            // (its streams end first, then the connection) is lost, and its entry stays in the journal
            // for the next connection to repair (seen by the soak: a fade-out's mute saved for good).
            var pending = entries.filter { $0.restoreID != nil }.count
            var failed = false
            for entry in entries {
                guard let name = entry.restoreID else { continue }
                let device = saved?.first { $0.name == name }?.device
                connection.writeSavedEntry(name: name, volume: entry.ownVolume, muted: entry.savedMute, device: device) {
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

// MARK: - Readiness and decisions

extension Daemon {
    /// Connected, the policy applied to the streams already there, and what an earlier run left
    /// changed put back: tell systemd (Type=notify) and whoever waits.
    func becameReady() {
        notifier.send("READY=1\nSTATUS=connected to \(serverName ?? "the sound server"); \(streams.count) stream(s)")
        onReady()
    }

    /// Keeps a decision for `status` (its `decisions` list) and `top`; stream starts are left out (they
    /// would crowd out what was done to streams).
    func recordDecision(_ decision: Decision) {
        guard decision.kind != .classified else { return }
        decisions.append(DecisionRecord(
            time: Date().timeIntervalSince1970, stream: decision.stream.rawValue, application: decision.application,
            class: decision.className, reason: decision.reason, action: decision.action))
    }
}
