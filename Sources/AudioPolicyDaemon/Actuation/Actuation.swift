import AudioPolicy
import EventLoop
import FoundationEssentials
import Logging
import SoundBackend

/// Carries out the engine's commands on the sound server and the players, journal first.
///
/// It writes what the daemon has done of each sink input into the stream's one record (``LiveStream``:
/// the user's own volume, the factor written, the meter), and owns the running ramps and the crash-safe
/// journal. Server intake tells it what the server said (Actuation+ServerNews); the daemon hands it each
/// batch of commands (``execute(_:)``). Touched only on the loop's thread.
final class Actuation {
    let loop: MainLoop
    var log: Logger
    let clock: DaemonClock
    let players: MediaPlayers

    /// Every live sink input's record (server intake begins and ends them).
    let streams: LiveStreams
    private(set) var ramps = RampStepper()
    /// Every factor strictly between 0 and 1 this run has ducked a stream to (ascending): journaled with
    /// each entry, for the next run's recovery (``JournalEntry/duckLevels``). Kept run-wide, not per
    /// stream, so that an entry prepared ahead still matches when its first duck is recorded.
    private(set) var duckLevels: [Double] = []
    /// The bookkeeping of the connected server's saved levels while it has them (nil on ALSA, which saves
    /// none): told what is written, asked where a new stream's start came from.
    private(set) var restore: SavedLevelsBook?
    /// That bookkeeping, one for the daemon's whole life: what a server saved of our writes outlives a
    /// connection to it (a server restart, a reconnect). The backends only report facts and take writes.
    /// Its verdicts that every stream needs (a stream's end, its journal record) are asked of it on every
    /// backend: one without saved levels never feeds it, so it answers as for a server that saves nothing.
    let savedLevelsBook = SavedLevelsBook()
    /// Streams put back as their users had them whose journal entries wait for the server's answer to
    /// the writes that did it (``removeOnceAnswered(_:_:)``).
    var removalsAwaitingAnswer: Set<UInt32> = []
    /// Streams an earlier run held muted for a lost output, kept muted by recovery: the engine hears them
    /// held when they are added (``streamAppeared(_:)``).
    var recoveredHolds: Set<UInt32> = []
    /// Streams recovery put back (unmuted, or at their own level again): on record as they stand once
    /// heard of, until the server has answered, so that a kill before that leaves the next run this run's
    /// word on them, not the recovered entry's (``RecoveryStep/newestPerStream(_:_:)``).
    var putBackByRecovery: Set<UInt32> = []
    /// Streams recovery unmuted, and when it sent those unmutes: their records keep the unmute in flight
    /// until the server has answered (``StreamLevel/unmutedByRecovery(at:)``).
    var unmutedByRecovery: (indexes: Set<UInt32>, sentAt: UInt64) = ([], 0)
    /// What the daemon has changed and not yet put back, on disk (Actuation+Journal).
    var journal: Journal
    /// Armed once, right after a change that grew the journal's log too long.
    var compactionTimer: MainLoop.Timer?
    /// Streams whose journal entry is to be encoded ahead on the next turn of the loop
    /// (``prepareJournalEntry(_:)``), and the timer that does it.
    var entriesToPrepare: Set<UInt32> = []
    var preparationTimer: MainLoop.Timer?
    /// Wakes the loop when the journal's sync thread could not write the durable copy (or can again).
    var durableCopyWatch: MainLoop.IOWatch?
    /// Armed a few seconds after a settled duck was first remembered: the file is written then
    /// (``SettledDuckFile``).
    var settledDuckTimer: MainLoop.Timer?
    /// Whether the settled ducks of earlier runs were read (once, at the first connection).
    var settledDucksRead = false
    /// The policy's `[audibility]`: new meters judge by it, and a reload hands it to the running ones
    /// (Actuation+Meters).
    var audibility = AudibilityThresholds() {
        didSet { judgeMeters(by: audibility) }
    }
    /// Called with a sink input's index and whether it is audible, on the main loop.
    var onAudibility: (UInt32, Bool) -> Void = { _, _ in }
    /// The sound server while connected (server intake hands it over and takes it back).
    private(set) var server: (any StreamServer)?

    /// Events found while acting, for the engine on the next turn of the loop.
    var feedLater: (Event) -> Void = { _ in }

    init(loop: MainLoop, log: Logger, clock: DaemonClock, streams: LiveStreams, players: MediaPlayers, journal: Journal) {
        self.loop = loop
        self.streams = streams
        self.log = log
        self.clock = clock
        self.players = players
        self.journal = journal
    }

    // MARK: - The connection

    func connected(to server: any StreamServer) {
        self.server = server
        restore = server.savedLevels == nil ? nil : savedLevelsBook
        restore?.log = log
        restore?.onSavedMuteChanged = { [unowned self] key in journalSavedMute(of: key) }
        restore?.connected(to: server)
        keepSettledDucks()
    }

    /// The server went away: nothing more can be written; its meters went with it.
    func disconnected() {
        server = nil
        removalsAwaitingAnswer = []
        restore?.disconnected()
        stopMeters()
    }

    // MARK: - Commands

    /// Carries out one batch of the engine's commands: everything the batch changes — volumes, mutes,
    /// player pauses — is on record in the journal before any of its requests leaves, so a crash in
    /// between finds it there, whatever the command.
    func execute(_ commands: [Command]) {
        let rampsBefore = ramps.startedCount
        journal.beginBatch()
        var requests: [() -> Void] = []
        for command in commands { record(command, requests: &requests) }
        report(journal.endBatch())
        for request in requests { request() }
        // New ramps are written once for the whole batch (a prompt ducks 200 streams in one go), one
        // step ahead, so the first change goes out at once rather than a tick later.
        if ramps.startedCount != rampsBefore { stepRamps(ahead: RampStepper.stepInterval) }
        compactJournalLater()
    }

    /// Notes a ramp's target among the run's duck levels.
    private func noteDuckLevel(_ level: Double) {
        guard level > 0, level < 1, !duckLevels.contains(level) else { return }
        duckLevels.append(level)
        duckLevels.sort()
    }

    /// Takes one command into the stream table (and the journal's batch); what it asks of the server or
    /// a player is appended to `requests`, sent once the batch is on record. Now Playing and decisions
    /// are publication's.
    private func record(_ command: Command, requests: inout [() -> Void]) {
        let now = clock.now
        switch command {
        case let .ramp(id, from, to, duration):
            guard let index = index(of: id) else { return }
            ramps.start(index, Ramp(from: from, to: to, start: now, duration: duration), byBackend: rampsByBackend(index))
            noteDuckLevel(to)
            journalSync(index)
        case let .mute(id, from, fade):
            guard let index = index(of: id) else { return }
            update(index) { $0.level.policyMutes() }
            ramps.start(index, Ramp(from: from, to: 0, start: now, duration: fade), then: .mute,
                        byBackend: rampsByBackend(index))
            journalSync(index)
        case let .hold(id):
            // The engine holds only what it muted and its user has not touched since; the journal keeps a
            // hold only together with the policy's mute (``JournalEntry``).
            guard let index = index(of: id) else { return }
            update(index) { $0.level.holdForLoss() }
            journalSync(index)
        case let .unmute(id, to, fade):
            guard let index = index(of: id) else { return }
            let sent = MainLoop.monotonicMicroseconds()
            update(index) { live in
                // The unmute goes out with this batch: until its echo, the mute the snapshot shows is ours,
                // never the user's. Journaled as the user's, a server restart or a kill before the echo had
                // it written back as the key's saved mute, and every later stream of the key started muted
                // (the soak, on PipeWire: the fade-in after a call cut short by a server restart).
                if live.level.policyUnmutes(at: sent) { live.input.muted = false }
            }
            noteDuckLevel(to)
            ramps.start(index, Ramp(from: 0, to: to, start: now, duration: fade), byBackend: rampsByBackend(index))
            journalSync(index)
            requests.append { [unowned self] in
                write(index, factor: 0)
                writeMute(index, false)
                server?.drain { [weak self] in self?.unmuteAnswered(index, sentBefore: sent &+ 1) }
            }
        case let .yieldVolume(id):
            guard let index = index(of: id) else { return }
            ramps.cancel(index)
            update(index) { $0.level.theirLevel($0.input.volume) }
            journalSync(index)
        case let .adoptLevel(id):
            // Untouched by the policy: what the next duck scales and its end gives back.
            guard let index = index(of: id) else { return }
            update(index) { $0.level.own = $0.input.volume }
            journalSync(index)
        case let .rewriteLevel(id):
            guard let index = index(of: id) else { return }
            requests.append { [unowned self] in rewriteOwnLevel(index) }
        case let .putBack(id, level, unmute):
            guard let index = index(of: id) else { return }
            if unmute {
                // Not the user's mute, whatever the snapshot says until the unmute's echo (see `.unmute`).
                update(index) { $0.input.muted = false }
            }
            requests.append { [unowned self] in putBack(index, level: level, unmute: unmute) }
        case let .repairSaved(id):
            guard let index = index(of: id), let live = streams[index] else { return }
            requests.append { [unowned self] in repairSavedEntry(of: live) }
        case let .pause(id, player), let .resume(id, player):
            // A pause is on record before it is asked for; a resume takes it off.
            let index = index(of: id)
            if let index {
                if case .pause = command { journalPausing(index, player: player) } else { journalResumed(index, player: player) }
            }
            requests.append { [unowned self] in players.ask(command, stream: index) }
        case let .measure(id, on):
            guard let index = index(of: id) else { return }
            requests.append { [unowned self] in measure(index, on) }
        case .nowPlaying, .decision, .interruptionBegan:
            break
        }
    }

    /// The live sink input an engine stream id stands for (``LiveStreams/index(of:)``).
    func index(of id: StreamID) -> UInt32? { streams.index(of: id) }

    // MARK: - Ramps

    /// When the next ramp step is due (ms since start), or nil when no ramp runs.
    func nextStep(after now: Double) -> Double? { ramps.nextStep(after: now) }

    var rampsIdle: Bool { ramps.isIdle }

    /// Writes the current value of every running ramp, hands a backend that ramps by itself its new
    /// ramps whole, and mutes what has faded out. A ramp that has just started is written one step
    /// `ahead`, so the first change goes out at once rather than a tick later.
    func stepRamps(ahead: Double = 0) {
        let now = clock.nowPrecise
        let (factors, whole, completed) = ramps.step(at: now, ahead: ahead)
        for (index, factor) in factors { write(index, factor: factor) }
        for (index, ramp) in whole { hand(index, ramp, at: now) }
        for (index, completion) in completed where completion == .mute {
            writeMute(index, true)
        }
        for (index, _) in completed { journalSync(index) }
    }

    /// Whether the backend moves sink input `index` along a ramp by itself.
    private func rampsByBackend(_ index: UInt32) -> Bool {
        guard let server, let live = streams[index] else { return false }
        return server.rampsByItself(live.id)
    }

    /// Hands the backend the rest of a ramp, from `now` to its end, in one write: the stream is at the
    /// ramp's target as far as the daemon's bookkeeping goes (the backend reports it so).
    private func hand(_ index: UInt32, _ ramp: Ramp, at now: Double) {
        guard let (id, level) = wanted(index, ramp.to, evenIfThere: true) else { return }
        server?.rampGain(id, own: level.own, to: ramp.to, over: max(0, Double(ramp.end) - now))
        noteWrite(index, volume: level.volume(at: ramp.to))
    }

    func write(_ index: UInt32, factor: Double) {
        guard let (id, level) = wanted(index, factor) else { return }
        server?.setGain(id, own: level.own, factor: factor)
        noteWrite(index, volume: level.volume(at: factor))
    }

    /// Notes `factor` as the one stream `index` is to be at (``StreamLevel/want(_:writable:evenIfThere:)``);
    /// its id and level record when the factor is to be written now, nil when not.
    private func wanted(_ index: UInt32, _ factor: Double, evenIfThere: Bool = false) -> (StreamID, StreamLevel)? {
        streams.update(index) { live in
            live.level.want(factor, writable: live.writable, evenIfThere: evenIfThere) ? (live.id, live.level) : nil
        } ?? nil
    }

    /// Writes a stream's own level once more (``Command/rewriteLevel(_:)``): a volume write of ours still on
    /// its way lands over its user's level, and this one lands after it.
    private func rewriteOwnLevel(_ index: UInt32) {
        guard let live = streams[index], live.writable else { return }
        log.debug("stream \(index): its user's level written again over our write still on its way")
        server?.setGain(live.id, own: live.level.own, factor: 1)
        noteWrite(index, volume: live.level.own)
    }

    // MARK: - The stream table

    /// For Actuation+ServerNews: the one place actuation changes a record outside a command.
    func update(_ index: UInt32, _ change: (inout LiveStream) -> Void) {
        streams.update(index, change)
    }

    /// Stops the stream's ramp where it is (its completion, a fade-out's mute, is not carried out).
    func stopRamp(_ index: UInt32) {
        ramps.cancel(index)
    }
}
