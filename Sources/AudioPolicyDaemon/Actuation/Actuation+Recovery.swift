import AudioPolicy
import EventLoop
import FoundationEssentials
import Logging
import SoundBackend

/// Crash recovery: what an earlier run, or a server that went away, left changed is put back before
/// the engine hears of the streams, and the saved entries our writes spoiled are repaired.
extension Actuation {

    /// Undoes every journaled change that is not of this connection: at start (an earlier run's
    /// entries) and after the server came back (this run's entries from the server that went away).
    ///
    /// Streams still there get their own volume back (if nobody set another one meanwhile) and are
    /// unmuted if we muted them; the saved entries of those gone are repaired. Returns the initial
    /// streams as they will be once that is done, so the engine starts from the user's levels.
    /// `completion` runs once the server has taken every write (the journal is cleared then).
    func recoverFromJournal(_ inputs: [SinkInput], completion: @escaping () -> Void) -> [SinkInput] {
        let recovering = journal.beginRecovery()
        let instance = restore?.serverInstance
        let plan = RecoveryPlan(recovering, written: \.written, heldForLoss: { $0.heldForLoss == true }) { entry in
            inputs.first { entry.describes($0, on: instance) }.map {
                RecoveryPlan.Present(volume: $0.volume, muted: $0.muted, writable: $0.hasVolume && $0.volumeWritable)
            }
        }
        let entries = plan.entries
        recoveredHolds = server == nil ? [] : plan.holds
        putBackByRecovery = server == nil ? [] : plan.putBack
        let unmuteSent = MainLoop.monotonicMicroseconds()
        let unmuted = server == nil ? [] : Set(plan.kept.filter(\.step.unmute).map(\.index))
        unmutedByRecovery = (unmuted, unmuteSent)
        // Streams that started while no daemon ran may have been given its ducks, or its mute.
        restore?.recovered(entries.map(\.written), gone: plan.goneIndexes,
                           present: Dictionary(inputs.map { ($0.index, $0.muted) }, uniquingKeysWith: { first, _ in first }))
        let marks = entries.compactMap { entry in
            entry.written.savedMute.map { mark in
                "\(entry.sinkInput) of \(entry.restoreID ?? "?") above \(mark.above)"
                    + (mark.ifUnmuteLost ? " if its unmute was lost" : "")
                    + (mark.unmuteOf.map { " (the unmute of \($0))" } ?? "")
            }
        }
        if !marks.isEmpty {
            let taken = (restore?.earlierMuteMarks ?? [:]).sorted { $0.key < $1.key }
                .map { "\($0.key) above \($0.value)" }
            let message = "journal: saved-mute marks \(marks.joined(separator: ", ")); taken: "
                + (taken.isEmpty ? "none" : taken.joined(separator: ", "))
            log.debug("\(message)")
        }
        restore?.rememberSettled(entries.map(\.written))
        // A server that restarted may have brought back a level some run's ducks settled at.
        restore?.repairSettledEntries()
        guard !entries.isEmpty, let server else {
            completion()
            return inputs
        }
        var restored = inputs
        var outcome: [String] = []
        for kept in plan.kept {
            let entry = kept.entry, step = kept.step
            guard let position = restored.firstIndex(where: { $0.index == kept.index }) else { continue }
            var input = restored[position]
            let name = "stream \(entry.sinkInput) (\(entry.application ?? "?"))"
            if step.held {
                // Its output went away and the user has not acted: unmuted, it would play on the speakers.
                // Its level comes back under the mute, and the engine holds it on (``streamAppeared(_:)``).
                outcome.append("\(name) kept muted (its output went away; held until the user acts)")
            } else if step.unmute {
                server.setMute(server.playbackID(input.index), muted: false)
                restore?.recoveryUnmuted(input)
                input.muted = false
                outcome.append("\(name) unmuted")
            }
            if let own = step.restore {
                server.setGain(server.playbackID(input.index), own: own, factor: 1)
                // A write like any other: a stream that ends a moment later gets its entry repaired.
                restore?.wroteOwnLevel(to: input, heldMuted: step.held, usersMute: input.muted, recovery: true)
                outcome.append("\(name) volume \(input.volume) -> \(own)")
                input.volume = own
            } else if step.leftAlone {
                outcome.append("\(name) left at \(input.volume) (set by someone else since)")
            }
            for player in entry.pausedPlayers {
                // As after a clean stop: never resumed behind the user's back (a call may still be on).
                outcome.append("\(name): player \(player) was paused for an interruption; left paused")
            }
            restored[position] = input
        }
        for entry in plan.gone where entry.pausedPlayers.isEmpty == false {
            outcome.append("stream \(entry.sinkInput) (\(entry.application ?? "?")) gone; its player "
                + entry.pausedPlayers.joined(separator: ", ") + " was paused for an interruption; left paused")
        }
        let repairable = plan.repairable
        for entry in repairable {
            outcome.append("stream \(entry.sinkInput) (\(entry.application ?? "?")) gone; repairing the saved "
                + "entry \(entry.restoreID ?? "")")
        }
        let summary = outcome.isEmpty ? "nothing to do" : outcome.joined(separator: "; ")
        log.info("journal: restoring \(entries.count) stream(s) left changed: \(summary)")
        let finish: (any StreamServer) -> Void = { [weak self] connection in
            connection.drain { [weak self] in
                guard let self, self.server === connection, connection.isReady else { return }
                // Answered: recovery's unmutes are no longer on record (``StreamLevel/unmutedByRecovery(at:)``).
                for index in unmuted.sorted() { self.unmuteAnswered(index, sentBefore: unmuteSent &+ 1) }
                self.report(self.journal.endRecovery(recovering))
                self.log.info("journal: recovery done")
                completion()
            }
        }
        if repairable.isEmpty {
            finish(server)
        } else {
            repairSaved(repairable) { connection in finish(connection) }
        }
        return restored
    }
}

extension Actuation {
    /// The streams present at a connection were heard of, after recovery: what recovery unmuted is the
    /// user's for the streams that start from now on (``LevelOwnership/streamsJudged()``).
    func streamsJudged() {
        for key in restore?.streamsJudged() ?? [] { journalSavedMute(of: key) }
    }
}
