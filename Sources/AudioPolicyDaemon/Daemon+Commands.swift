import AudioPolicy
import EventLoop
import FoundationEssentials
import Glibc
import Logging
import SoundServer

/// Carrying out the engine's commands on the sound server and the players, journal first.
extension Daemon {
    func execute(_ commands: [Command]) {
        let rampsBefore = ramps.startedCount
        journal.beginBatch()
        var requests: [() -> Void] = []
        for command in commands { record(command, requests: &requests) }
        // Everything the batch changes — volumes, mutes, player pauses — is on record before any of its
        // requests leaves: a crash in between finds it in the journal, whatever the command.
        report(journal.endBatch())
        for request in requests { request() }
        // New ramps are written once for the whole batch (a prompt ducks 200 streams in one go), one
        // step ahead, so the first change goes out at once rather than a tick later.
        if ramps.startedCount != rampsBefore { stepRamps(ahead: RampStepper.stepInterval) }
        publishStreamChanges()
        compactJournalLater()
    }

    /// Takes one command into the daemon's records (and the journal's batch); what it asks of the server
    /// or a player is appended to `requests`, sent once the batch is on record.
    private func record(_ command: Command, requests: inout [() -> Void]) {
        switch command {
        case let .ramp(id, from, to, duration):
            guard let index = index(of: id) else { return }
            ramps.start(index, Ramp(from: from, to: to, start: now, duration: duration))
            journalSync(index)
        case let .mute(id, fade):
            guard let index = index(of: id), let live = streams[index] else { return }
            streams[index]?.policyMuted = true
            ramps.start(index, Ramp(from: live.factor, to: 0, start: now, duration: fade), then: .mute)
            journalSync(index)
        case let .unmute(id, to, fade):
            guard let index = index(of: id) else { return }
            streams[index]?.policyMuted = false
            ramps.start(index, Ramp(from: 0, to: to, start: now, duration: fade))
            journalSync(index)
            requests.append { [unowned self] in
                write(index, factor: 0)
                pulse?.setMute(index: index, muted: false)
            }
        case let .yieldVolume(id):
            guard let index = index(of: id), var live = streams[index] else { return }
            ramps.cancel(index)
            live.ownVolume = live.input.volume
            live.factor = 1
            streams[index] = live
            journalSync(index)
        case let .repairSaved(id):
            guard let index = index(of: id), let live = streams[index] else { return }
            requests.append { [unowned self] in repairSavedEntry(of: live) }
        case let .pause(id, player), let .resume(id, player):
            // Daemon+Journal: a pause is on record before it is asked for; a resume takes it off.
            if let index = index(of: id) {
                if case .pause = command { journalPausing(index, player: player) } else { journalResumed(index, player: player) }
            }
            requests.append { [unowned self] in askPlayer(command) }
        case let .nowPlaying(id):
            nowPlayingChanged(id)
        case let .measure(id, on):
            guard let index = index(of: id) else { return }
            requests.append { [unowned self] in measure(index, on) }
        case let .decision(decision):
            recordDecision(decision)
            publish(decision)
            if decision.kind == .acted {
                log.info("\(decision)")
            } else {
                log.debug("\(decision)")
            }
        }
    }

    func index(of id: StreamID) -> UInt32? {
        UInt32(id.rawValue).flatMap { streams[$0] == nil ? nil : $0 }
    }

    /// Writes the current value of every running ramp; mutes what has faded out. A ramp that has just
    /// started is written one step `ahead`, so the first change goes out at once rather than a tick later.
    func stepRamps(ahead: Double = 0) {
        let (factors, completed) = ramps.step(at: nowPrecise + ahead)
        for (index, factor) in factors { write(index, factor: factor) }
        for (index, completion) in completed where completion == .mute {
            pulse?.setMute(index: index, muted: true)
        }
        for (index, _) in completed { journalSync(index) }
    }

    private func write(_ index: UInt32, factor: Double) {
        guard var live = streams[index], live.input.hasVolume, live.input.volumeWritable, !live.input.volumePending,
              factor != live.factor else { return }
        live.factor = factor
        live.lastWriteAt = MainLoop.monotonicMicroseconds()
        streams[index] = live
        let volume = live.volume(at: factor)
        pulse?.setVolume(index: index, volumes: volume)
        noteWrite(index, volume: volume)
    }

    /// The server told the stream's volume late (pipewire-pulse): it is the stream's own. What the policy
    /// asks of the stream now is written, unless a running ramp writes it at its next step.
    func volumeArrived(_ index: UInt32) {
        guard var live = streams[index] else { return }
        live.ownVolume = live.input.volume
        streams[index] = live
        // Daemon+SavedWrites: a volume the server restored from one of our ducks is not the stream's own.
        let mutedByUs = adoptSavedOrigin(index)
        let adopted = mutedByUs || streams[index]?.ownVolume != live.ownVolume
        if ramps.running[index] == nil, let factor = engine.factor(of: Self.streamID(index), at: now), factor != 1,
           streams[index]?.policyMuted == false {
            write(index, factor: factor)
        }
        if adopted { correctSavedStart(index, mutedByUs: mutedByUs) }
        journalSync(index)
    }

    /// The server saved the ducked or muted level for this app or role (module-stream-restore) when we
    /// wrote it; write the user's own level back so the next stream starts where the user left it.
    /// (Daemon+Journal: the same repair as crash recovery's; the journal entry goes once it is sent.)
    func repairSavedEntry(of live: LiveStream) {
        guard live.input.restoreID != nil, !live.input.volumePending else { return }
        let index = live.input.index
        repairSaved([live.journalEntry(pausedPlayers: [])]) { [weak self] _ in self?.journalRepairSent(index) }
    }
}
