/// The daemon's level bookkeeping as a pure model, for the rehearsal of levels fixtures and the property
/// run: the levels stage's decisions (``LevelOwnership``, ``SavedStartCorrection``, ``RecoveryPlan``)
/// played in the order the daemon plays them against a ``SavingServer`` — what it writes for a policy's
/// duck or mute, what it journals, what survives a kill, what recovery does.
///
/// The shell's actuation does the same with the real server (Actuation+ServerNews, +Journal, +Recovery);
/// what is decided, not how it is sent, is shared.
public struct RehearsedDaemon: Sendable {
    /// The daemon's record of one live stream.
    public struct Live: Equatable, Sendable {
        public var key: String
        /// What the daemon has done to its level and mute: the record the daemon's actuation keeps too.
        public var level: StreamLevel
        /// The server has not told its volume yet (pipewire-pulse): nothing is written to it, and it has
        /// no own level (empty).
        public var volumePending = false
        /// Its user's mute, as far as the daemon knows.
        public var muted = false

        init(key: String, own: ChannelVolumes, muted: Bool) {
            self.key = key
            level = StreamLevel(own: own)
            self.muted = muted
        }

        /// The policy's mute as the journal has it (``StreamLevel/policyMutedOnRecord(mutedNow:)``).
        var policyMutedOnRecord: Bool { level.policyMutedOnRecord(mutedNow: muted) }
    }

    /// One journal entry: what survives a kill.
    public struct Journaled: Equatable, Sendable {
        public var written: WrittenStream
        public var heldForLoss: Bool
    }

    public private(set) var ownership = LevelOwnership()
    public private(set) var live: [UInt32: Live] = [:]
    /// On disk: survives a kill.
    public private(set) var journal: [UInt32: Journaled] = [:] {
        didSet { noteJournalOrder(was: oldValue) }
    }
    /// The order the journal's entries last changed in (``JournalOrder``): the file keeps it.
    private var journalOrder = JournalOrder()
    /// The entries a recovery undoes, kept on disk (before this run's) until the server has answered the
    /// writes that undo them, sent at the time given, as the daemon keeps them (``Journal``'s
    /// `recovering`): a kill before that leaves them for the next run.
    public private(set) var recovering: [Journaled] = []
    private var recoverySentAt: Milliseconds?
    /// Entries of streams put back as their users had them, kept until the server has answered the
    /// writes that put them back (sent at the time given; ``serverAnswered(writesSentBefore:)``), as the
    /// daemon keeps them (Actuation+Journal): a kill before that leaves them on disk for the next run.
    private var removalsAwaitingAnswer: [UInt32: Milliseconds] = [:]
    /// When the daemon last sent a write.
    private var lastSentAt: Milliseconds = 0
    /// Repairs of ended streams' entries, each waiting on the read of the saved entries that comes first,
    /// as the daemon's do (``SavedLevelsBook/repair(_:completion:)`` writes once the read is answered): sent
    /// at the daemon's next step, with the time of the end; lost if a kill or a server restart comes in
    /// the same millisecond as the end (``savedEntriesRead(on:before:)``). The journal keeps a journaled one's entry either way.
    private var repairsAwaitingRead: [(written: WrittenStream, index: UInt32, at: Milliseconds)] = []
    /// The settled-duck file: survives a kill.
    public private(set) var settledDucks: [SettledDuck] = []
    /// Every factor strictly between 0 and 1 this run ducked to.
    private var duckLevels: [Double] = []
    /// Streams recovery kept muted for a lost output.
    private var recoveredHolds: Set<UInt32> = []
    /// Streams recovery unmuted: their records keep that unmute in flight until it is answered
    /// (``StreamLevel/unmutedByRecovery(at:)``).
    private var unmutedByRecovery: Set<UInt32> = []
    /// Streams recovery put back (unmuted, or at their own level again): journaled as they stand once
    /// heard of, until the server has answered (``journalSync(_:)``), as the daemon does.
    private var putBackByRecovery: Set<UInt32> = []
    public private(set) var alive = true
    /// Connected to the server (not between its restart and the reconnection).
    public private(set) var connected = false

    /// A control for the property run: the daemon of the soak's bug, which takes every start's mute for
    /// its user's (the levels stage's answer about it ignored). Never set but by the property tests' control.
    public var takesStartMutesForTheUsers = false

    public init() {}

    /// How long the daemon's clock has run when the rehearsal's begins (ms).
    static let clockStart: Milliseconds = 1000

    /// The daemon's clock (µs, monotonic) at the rehearsal's `now` (ms). It has run a while when the
    /// rehearsal begins, as a real one has: 0 is earlier than anything the daemon did (a start that
    /// overtook a repair is announced at 0; found by the levels property run: a repair sent at the
    /// rehearsal's 0 ms was not later than that, and the start taken for one after it).
    static func clock(_ now: Milliseconds) -> UInt64 {
        UInt64(now + clockStart) * 1000
    }

    // MARK: - Connecting

    /// Connects (at start, and after a server restart): an earlier run's or the gone server's journal is
    /// recovered, then every stream is heard of.
    public mutating func connect(to server: inout SavingServer, at now: Milliseconds) {
        alive = true
        connected = true
        ownership.connected(saving: server.saving, server: server.cookie)
        ownership.rememberSettled(settledDucks)
        // The file holds the entries still recovering, then this run's (an index may appear twice).
        recovering += journalOrder.sorted(journal)
        recoverySentAt = now
        let streams = server.streams, cookie = server.cookie
        let plan = RecoveryPlan(recovering, written: \.written, heldForLoss: \.heldForLoss) { entry in
            streams[entry.written.index].flatMap { stream in
                stream.key == entry.written.key && entry.written.mayPlay(on: cookie)
                    ? RecoveryPlan.Present(volume: stream.volume, muted: stream.muted, writable: true) : nil
            }
        }
        let entries = plan.entries
        ownership.recovered(entries.map(\.written), gone: plan.goneIndexes,
                            present: server.streams.mapValues(\.muted), savedMuted: Set(server.entries.filter(\.value.muted).map(\.key)), now: Self.clock(now))
        _ = ownership.rememberSettled(entries.map(\.written))
        recoveredHolds = plan.holds
        putBackByRecovery = plan.putBack
        unmutedByRecovery = Set(plan.kept.filter(\.step.unmute).map(\.index))
        for kept in plan.kept {
            let written = kept.entry.written, step = kept.step
            guard let stream = server.streams[kept.index] else { continue }
            if step.putsBack { lastSentAt = now }
            if step.unmute {
                server.setMute(written.index, false, byDaemon: true, at: now)
                ownership.recoveryUnmuted(written.index, key: written.key, now: Self.clock(now))
            }
            if let own = step.restore {
                // Sent with the unmute, if any: one batch, applied (or lost) as one.
                server.setVolume(written.index, own, byDaemon: true, at: now, continuesBatch: step.unmute)
                // A write like any other: a stream that ends a moment later gets its entry repaired.
                ownership.wroteOwnLevel(to: written.index, key: written.key, heldMuted: step.held,
                                        usersMute: !step.unmute && stream.muted, recovery: true,
                                        now: Self.clock(now))
            }
        }
        journal = [:]
        removalsAwaitingAnswer = [:]
        live = [:]
        for (key, entry) in server.entries.sorted(by: { $0.key < $1.key }) {
            if let own = ownership.settledRepair(key: key, saved: entry.volume) {
                server.writeEntry(key, volume: own, muted: entry.muted, for: nil, at: now)
            }
        }
        for index in server.streams.keys.sorted() { appeared(index, on: &server, at: now) }
        for key in ownership.streamsJudged() { journalSavedMute(of: key) }
        // The server answers the repairs after the streams are known (the daemon sends them together).
        // Each for its stream where it ended on this instance and the policy did not mute it: the repair
        // writes that stream's own level and mute, its user's (found by the levels property run: a gone
        // stream's repair with its user's mute, after recovery's write of a held stream of the key had saved
        // the same mute, ours, was judged as keeping ours, and the next stream's mute, the user's, taken for
        // one of ours). For a stream the policy muted it writes its key's mute as its users have it
        // (``WrittenStream/savedEntryMute``), not that stream's: taken as meant.
        for entry in plan.repairable {
            let written = entry.written
            let own = written.server == cookie && !written.policyMuted
            repair(written, for: own ? written.index : nil, on: &server, at: now)
        }
    }

    /// Killed (SIGKILL): nothing is put back; the journal and the settled ducks stay on disk.
    public mutating func kill() {
        alive = false
        connected = false
        removalsAwaitingAnswer = [:]
        repairsAwaitingRead = []
        ownership = LevelOwnership()
        live = [:]
        duckLevels = []
    }

    /// The server went away: nothing can be written; the journal keeps what this run changed.
    public mutating func serverGone() {
        connected = false
        repairsAwaitingRead = []
        ownership.disconnected()
        for index in live.keys { ownership.streamEnded(index) }
        live = [:]
    }

    // MARK: - What the server tells

    /// A new stream, as the server started it; `volumeLate`: as pipewire-pulse announces it, at 0 and
    /// unmuted until its volume arrives (``volumeArrived(_:on:at:)``).
    /// `killedAsItStarts`: the daemon is killed as it hears of it, once its journal has noted the start
    /// and before it has put the start right (``LevelOwnership/startJudged(_:)``).
    public mutating func appeared(_ index: UInt32, volumeLate: Bool = false, killedAsItStarts: Bool = false,
                                  on server: inout SavingServer, at now: Milliseconds) {
        guard connected, let stream = server.streams[index] else { return }
        if volumeLate {
            var record = Live(key: stream.key, own: ChannelVolumes(values: []), muted: false)
            record.volumePending = true
            live[index] = record
            ownership.announcedWithoutVolume(index, key: stream.key, now: Self.clock(now))
            return
        }
        let held = recoveredHolds.remove(index) != nil && stream.muted
        var record = Live(key: stream.key, own: stream.volume, muted: stream.muted)
        if held { record.level.heldByRecovery() }
        if unmutedByRecovery.remove(index) != nil, !stream.muted, let sent = recoverySentAt {
            record.level.unmutedByRecovery(at: Self.clock(sent))
        }
        live[index] = record
        // Put back by recovery: on record as it stands at once, as the daemon journals it when it hears of it.
        if putBackByRecovery.contains(index) { journalSync(index) }
        if ownership.streamAppeared(index, key: stream.key, muted: stream.muted) { journalSavedMute(of: stream.key) }
        if killedAsItStarts { return kill() }
        defer { judged(index, key: stream.key) }
        if held { return journalSync(index) }
        // One that overtook a repair was announced before the server answered it.
        guard var origin = ownership.origin(of: index, key: stream.key, volume: stream.volume, muted: stream.muted,
                                            volumeKnown: true, announcedAt: stream.overtookRepair ? 0 : Self.clock(now),
                                            now: Self.clock(now)) else { return }
        live[index]?.level.own = origin.own
        live[index]?.muted = StartOrigin.usersMute(startedMuted: stream.muted, mutedByUs: origin.mutedByUs, held: false)
        if takesStartMutesForTheUsers { origin.mutedByUs = false }
        correctStart(index, origin, at: stream.volume, untouched: true, policyMuted: false, on: &server, now: now)
        journalSync(index)
    }

    /// The daemon has acted on a start (as server intake does once the engine has heard of it): it counts
    /// as seen, and the journal's marks of its key go above it.
    private mutating func judged(_ index: UInt32, key: String) {
        if ownership.startJudged(index) { journalSavedMute(of: key) }
    }

    /// A start at a level or mute of ours, put right as the levels stage says (``SavedStartCorrection``):
    /// its own level written and its mute undone in one batch, as the daemon sends them.
    private mutating func correctStart(_ index: UInt32, _ origin: StartOrigin, at volume: ChannelVolumes,
                                       untouched: Bool, policyMuted: Bool, on server: inout SavingServer,
                                       now: Milliseconds) {
        guard let key = live[index]?.key else { return }
        let correction = SavedStartCorrection.of(origin, volume: volume, own: origin.own, untouched: untouched,
                                                 writable: true, policyMuted: policyMuted)
        if correction.writeOwn {
            server.setVolume(index, origin.own, byDaemon: true, at: now)
            if ownership.wroteOwnLevel(to: index, key: key, heldMuted: false, usersMute: live[index]?.muted ?? false,
                                       now: Self.clock(now)) {
                journalSavedMute(of: key)
            }
        }
        if correction.unmute { writeMute(index, false, on: &server, at: now, continuesBatch: correction.writeOwn) }
    }

    /// The server told the volume and mute of a stream it announced without them: the levels stage says
    /// what its own level is and whether its mute is its user's (``LateVolume``); what the policy asked for
    /// meanwhile is written now, as the engine restates it (``Event/levelTold(_:muted:)``: here no ramp
    /// runs), and a start at a level or mute of ours is put right (``SavedStartCorrection``).
    public mutating func volumeArrived(_ index: UInt32, on server: inout SavingServer, at now: Milliseconds) {
        guard connected, var record = live[index], record.volumePending, let stream = server.streams[index] else {
            return
        }
        var origin = ownership.origin(of: index, key: stream.key, volume: stream.volume, muted: stream.muted,
                                      volumeKnown: true, now: Self.clock(now))
        if takesStartMutesForTheUsers { origin?.mutedByUs = false }
        let late = LateVolume.arrived(at: stream.volume, muted: stream.muted, origin: origin,
                                      policyMuted: record.level.policyMuted)
        // The engine's restatement with no ramp running: the policy's mute where the stream arrived
        // without one, the factor where the policy does not mute it.
        let muteNow = record.level.policyMuted && !stream.muted
        let writeWanted = !record.level.policyMuted || muteNow
        let savedMuteOurs = ownership.volumeArrived(index, key: stream.key, muted: stream.muted)
        record.volumePending = false
        record.level.own = late.own
        record.muted = late.usersMute
        if late.policyYields { record.level.policyYieldsMute() }
        live[index] = record
        if savedMuteOurs { journalSavedMute(of: stream.key) }
        journalSync(index)
        if writeWanted { write(index, factor: record.level.wanted, on: &server, at: now) }
        if muteNow { writeMute(index, true, on: &server, at: now, continuesBatch: writeWanted) }
        if late.adopted, let written = live[index] {
            correctStart(index, StartOrigin(own: late.own, mutedByUs: late.mutedByUs), at: stream.volume,
                         untouched: written.level.factor == 1, policyMuted: written.level.policyMuted, on: &server,
                         now: now)
        }
        journalSync(index)
        judged(index, key: stream.key)
    }

    /// Its user set its level: that is its own from now on, and the policy yields to it.
    public mutating func userLevel(_ index: UInt32, on server: SavingServer) {
        guard connected, var record = live[index], let stream = server.streams[index] else { return }
        record.level.theirLevel(stream.volume)
        live[index] = record
        if ownership.streamChanged(index, key: record.key, theirLevel: true, policyMuted: record.level.policyMuted,
                                   muted: record.muted) {
            journalSavedMute(of: record.key)
        }
        journalSync(index)
    }

    /// Its user muted or unmuted it: the mute is theirs, never the policy's to undo.
    public mutating func userMuted(_ index: UInt32, _ muted: Bool) {
        guard connected, var record = live[index] else { return }
        record.muted = muted
        record.level.theyMuted()
        live[index] = record
        ownership.theyMuted(index, key: record.key, muted: muted)
        journalSavedMute(of: record.key)
        journalSync(index)
    }

    /// The server's reports of what it applied arrive (the daemon's writes are applied at once, unless a
    /// start overtakes them: ``LevelsScenario/Action/start(_:key:level:muted:beforeWritesApplied:)``).
    public mutating func snapshotsArrive(from server: SavingServer) {
        guard connected else { return }
        for (index, record) in live {
            guard let stream = server.streams[index], stream.lastWriteReported else { continue }
            ownership.seen(index, key: record.key, muted: stream.muted)
        }
    }

    /// The server moved it.
    public mutating func moved(_ index: UInt32) {
        guard connected, let record = live[index] else { return }
        if ownership.streamChanged(index, key: record.key, theirLevel: false, policyMuted: record.level.policyMuted,
                                   muted: record.muted) {
            journalSavedMute(of: record.key)
        }
    }

    /// It ended (after the server let it go): its saved entry is repaired if the daemon had it changed, or
    /// wrote to it a moment before.
    public mutating func ended(_ index: UInt32, on server: inout SavingServer, at now: Milliseconds) {
        guard connected, let record = live[index] else { return }
        // As in the daemon, whose repairs are answered after the stream's end is taken.
        let written = written(index, record)
        live[index] = nil
        let end = ownership.streamEnded(index, journaled: journal[index] != nil, now: Self.clock(now))
        removalsAwaitingAnswer[index] = nil
        switch end {
        case .lateWrite:
            repairsAwaitingRead.append((written, index, now))
        case .journaled:
            // The entry stays on disk until the server has answered the repair, as the daemon keeps it
            // (Actuation+Journal): a kill before that leaves it for the next run to repair again.
            if let entry = journal[index] {
                repairsAwaitingRead.append((entry.written, index, now))
                removalsAwaitingAnswer[index] = now
            }
        case .none:
            journal[index] = nil
        }
    }

    /// The server answered the read of its saved entries that the repairs of ended streams wait on, for
    /// those that ended before `time` (all, if nil): they are sent, at the time of each end (the read takes
    /// a round trip, under a millisecond).
    public mutating func savedEntriesRead(on server: inout SavingServer, before time: Milliseconds? = nil) {
        let repairs = repairsAwaitingRead.filter { repair in time.map { repair.at < $0 } ?? true }
        repairsAwaitingRead.removeFirst(repairs.count)
        guard connected else { return }
        for repair in repairs {
            lastSentAt = max(lastSentAt, repair.at)
            self.repair(repair.written, for: repair.index, on: &server, at: repair.at)
        }
    }

    /// Writes the stream's own level back as its key's entry, with the mute the levels stage says.
    private mutating func repair(_ stream: WrittenStream, for index: UInt32?, on server: inout SavingServer,
                                 at now: Milliseconds) {
        guard let key = stream.key, !stream.own.values.isEmpty else { return }
        let saved = server.entries[key]
        let muted = ownership.repairMute(of: stream, saved: saved?.muted)
        if ownership.repairSent(key: key, muted: muted, over: saved?.muted, for: stream.index) { journalSavedMute(of: key) }
        server.writeEntry(key, volume: stream.own, muted: muted, for: index, at: now)
        if ownership.entryRepaired(key: key, muted: muted, level: stream.own, now: Self.clock(now)) {
            journalSavedMute(of: key)
        }
    }

    // MARK: - What the policy does

    /// The policy's factor on the stream, written in `steps` steps (a ramp) from where it is.
    public mutating func ramp(_ index: UInt32, to factor: Double, steps: Int, on server: inout SavingServer,
                              at now: Milliseconds) {
        guard connected, let record = live[index] else { return }
        if factor > 0, factor < 1, !duckLevels.contains(factor) { duckLevels.append(factor); duckLevels.sort() }
        let from = record.level.factor
        let count = max(steps, 1)
        for step in 1...count {
            let f = step == count ? factor : from + (factor - from) * Double(step) / Double(count)
            write(index, factor: f, on: &server, at: now)
        }
    }

    /// The mute fallback: faded out, then muted. Never a stream its user muted (the engine leaves those be).
    public mutating func fadeOut(_ index: UInt32, on server: inout SavingServer, at now: Milliseconds) {
        guard connected, let record = live[index], !record.muted, !record.level.policyMuted else { return }
        live[index]?.level.policyMutes()
        journalSync(index)
        write(index, factor: 0, on: &server, at: now)
        writeMute(index, true, on: &server, at: now, continuesBatch: true)
        journalSync(index)
    }

    /// The mute is held until the user acts (its output went away).
    public mutating func hold(_ index: UInt32) {
        guard connected, live[index]?.level.policyMuted == true else { return }
        live[index]?.level.holdForLoss()
        journalSync(index)
    }

    /// The policy's mute is over: unmuted, and faded in to its own level.
    public mutating func unmute(_ index: UInt32, on server: inout SavingServer, at now: Milliseconds) {
        guard connected, live[index]?.level.policyMuted == true else { return }
        live[index]?.level.policyUnmutes(at: Self.clock(now))
        // The mute it had was ours (a held stream is heard of muted): unmuted, it is not its user's, as
        // the daemon's unmute command takes it (Actuation.record).
        live[index]?.muted = false
        journalSync(index)
        // One batch, as the daemon's unmute command sends it: lost as one if the stream ends at once.
        write(index, factor: 0, on: &server, at: now)
        writeMute(index, false, on: &server, at: now, continuesBatch: true)
        write(index, factor: 1, on: &server, at: now, continuesBatch: true)
        journalSync(index)
    }

    // MARK: - Writing

    private mutating func write(_ index: UInt32, factor: Double, on server: inout SavingServer, at now: Milliseconds,
                                continuesBatch: Bool = false) {
        guard var record = live[index] else { return }
        let send = record.level.want(factor, writable: !record.volumePending)
        live[index] = record
        guard send else { return }
        lastSentAt = now
        let volume = record.level.volume(at: factor)
        journalSync(index)
        server.setVolume(index, volume, byDaemon: true, at: now, continuesBatch: continuesBatch)
        if ownership.wrote(volume, to: index, key: record.key, own: record.level.own, policyMuted: record.level.policyMuted,
                           muted: record.muted,
                           now: Self.clock(now)) {
            journalSavedMute(of: record.key)
        }
    }

    private mutating func writeMute(_ index: UInt32, _ muted: Bool, on server: inout SavingServer,
                                    at now: Milliseconds, continuesBatch: Bool = false) {
        // Held back until the server tells the stream's volume and mute (``LateVolume``).
        guard let record = live[index], !record.volumePending else { return }
        lastSentAt = now
        ownership.wroteMute(muted, to: index, key: record.key, now: Self.clock(now))
        journalSavedMute(of: record.key)
        server.setMute(index, muted, byDaemon: true, at: now, continuesBatch: continuesBatch)
    }

    // MARK: - The journal

    /// Keeps ``journalOrder`` as the journal changes.
    private mutating func noteJournalOrder(was old: [UInt32: Journaled]) {
        for (index, entry) in journal where old[index] != entry {
            journalOrder.recorded(index, entry.written, over: old[index]?.written)
        }
        for index in old.keys where journal[index] == nil { journalOrder.removed(index) }
    }

    /// Records the stream as it stands if the daemon has it changed; else its entry goes.
    private mutating func journalSync(_ index: UInt32) {
        guard let record = live[index] else { return }
        // Nothing is written to a stream whose volume the server has not told: nothing is on record.
        guard record.level.isChanged(mutedNow: record.muted, volumePending: record.volumePending) else {
            // Kept, as it stands now (its user's level and mute), until the server has answered the
            // writes that put it back (recovery's too).
            guard journal[index] != nil || putBackByRecovery.remove(index) != nil, !record.volumePending else { return }
            journal[index] = Journaled(written: written(index, record), heldForLoss: false)
            removalsAwaitingAnswer[index] = lastSentAt
            return
        }
        removalsAwaitingAnswer[index] = nil
        let written = written(index, record)
        journal[index] = Journaled(written: written, heldForLoss: record.level.heldForLoss)
        if record.level.factor < 1, ownership.rememberSettled([written]) { settledDucks = ownership.settledDucks }
    }

    /// The server has answered every write sent before `time`: the entries of streams those writes put
    /// back go. Writes sent since may still be lost (``SavingServer/writeInFlight``), and a kill before
    /// their answer leaves the entries on disk.
    public mutating func serverAnswered(writesSentBefore time: Milliseconds) {
        guard connected else { return }
        for index in live.keys.sorted() where live[index]?.level.writesAnswered(sentBefore: Self.clock(max(time, -Self.clockStart))) == true {
            journalSync(index)
        }
        for key in ownership.writesAnswered(sentBefore: Self.clock(max(time, -Self.clockStart))) { journalSavedMute(of: key) }
        if let sent = recoverySentAt, sent < time {
            recovering = []
            recoverySentAt = nil
        }
        for (index, sent) in removalsAwaitingAnswer where sent < time {
            removalsAwaitingAnswer[index] = nil
            journal[index] = nil
        }
    }

    /// The stream as the journal writes it.
    private func written(_ index: UInt32, _ record: Live) -> WrittenStream {
        ownership.written(index, key: record.key, own: record.level.own, usersMute: record.muted,
                          policyMutedOnRecord: record.policyMutedOnRecord,
                          unmuteInFlight: record.level.unmuteInFlight(mutedNow: record.muted), duckLevels: duckLevels,
                          silenced: record.level.factor == 0)
    }

    private mutating func journalSavedMute(of key: String) {
        for (index, entry) in journal where entry.written.key == key && entry.written.policyMuted {
            guard live[index] == nil else {
                journalSync(index)
                continue
            }
            // Ended, kept until its repair is answered: its mark as it stands now.
            let mark = ownership.savedMuteMark(ofEnded: entry.written)
            journal[index]?.written.savedMute = mark
        }
    }
}
