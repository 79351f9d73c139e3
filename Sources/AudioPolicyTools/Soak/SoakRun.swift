import AudioPolicy
import AudioPolicyDaemon
import EventLoop
import FoundationEssentials
import FoundationGaps
import Glibc
import PulseBackend
import SoundBackend

/// A soak: minutes of churn on the real sound server that the daemon is connected to, with the
/// daemon's promise checked at quiet moments — audio is never left quiet, muted or paused by something
/// that is over, and the user's levels are kept.
///
/// Streams of every class start and end at the plan's rate from real libpulse clients (``SoakApp``),
/// some created corked, some from apps that quit abruptly mid-duck; the user changes volumes and mutes
/// through a mixer connection of their own (``UserMixer``); at random moments the daemon is killed
/// with SIGKILL and started again, and the server is restarted. At checkpoints everything that
/// interrupts is ended and, once the daemon says nothing is ducked or paused any more (its events
/// wake the check, no blind sleeps), every surviving stream and saved stream-restore entry is compared
/// with what the user chose (``UserLevels``). Everything runs on one ``MainLoop``.
public final class SoakRun {
    enum Phase {
        case churning
        /// A checkpoint: interrupters ended, waiting for the daemon to have undone everything.
        case settling(Checkpoint)
        /// Reading the saved entries back (they can lag behind on PipeWire).
        case readingEntries(Checkpoint)
        /// The server was restarted: waiting for the mixer and the daemon to be connected again.
        case reconnecting
        case finished
    }

    /// One checkpoint under way.
    final class Checkpoint {
        let number: Int
        let final: Bool
        let startedAt: UInt64
        var deadline: UInt64
        var entryReads = 0
        /// It injected the stray-volume fault, and so runs to its deadline.
        var holdsFault = false
        /// What it last waited for (traced when it changes).
        var waitingFor = ""
        init(number: Int, final: Bool, startedAt: UInt64, deadline: UInt64) {
            self.number = number
            self.final = final
            self.startedAt = startedAt
            self.deadline = deadline
        }
    }

    let plan: SoakPlan
    let say: (String) -> Void
    let loop = MainLoop()
    var random: SoakRandom
    var report = SoakReport()
    var phase = Phase.churning
    let mixer: UserMixer
    let daemon: SupervisedDaemon
    var events: DaemonEvents?
    /// Whether the daemon answers and is connected to the server.
    var daemonReady = false
    var apps: [Int: SoakApp] = [:]
    /// Apps that went with the server, to be let go outside their own callbacks.
    var lost: [SoakApp] = []
    var levels = UserLevels()
    /// Sink input → app number, for the apps whose stream the mixer has seen.
    var appOfStream: [UInt32: Int] = [:]
    var uncorkAt: [Int: UInt64] = [:]
    var nextNumber = 0
    var startedAt: UInt64 = 0
    var endAt: UInt64 = 0
    var nextStart: UInt64 = 0
    var nextUserChange: UInt64 = 0
    var nextCheckpoint: UInt64 = 0
    var nextKill: UInt64 = .max
    var nextRestart: UInt64 = .max
    var daemonDownUntil: UInt64?
    /// When the daemon last started or became ready: its recovery writes then, as a ramp does.
    var daemonStirredAt: UInt64 = 0
    /// The output episode under way (one at a time), when the next starts, and how many there were.
    var output: OutputEpisode?
    var nextOutput: UInt64 = .max
    var nextOutputNumber = 0
    /// How many output episodes ended each way.
    var outputEndings: [OutputEpisode.Ending: Int] = [:]
    var checkpointCount = 0
    /// Whether the saved entries that predate the soak were read (apps start only then).
    var adoptedEntries = false
    var adopting = false
    /// Whether the plan's fault was made (once, at the first checkpoint that settles).
    var faultInjected = false
    /// Saved-entry problems already reported (each once).
    var reportedEntries: Set<String> = []
    var tick: MainLoop.Timer?
    var poll: MainLoop.Timer?
    var entryRetry: MainLoop.Timer?

    /// The process id the music app's streams all carry; other apps get one each above it. No such
    /// processes exist (above Linux's largest pid).
    static let musicPid = 5_000_000

    public init(plan: SoakPlan, say: @escaping (String) -> Void) {
        self.plan = plan
        self.say = say
        random = SoakRandom(seed: plan.seed)
        mixer = UserMixer(loop: loop)
        daemon = SupervisedDaemon(executable: plan.daemonExecutable, folder: plan.folder, policy: plan.policy)
    }

    /// Runs the soak to its end and returns what it found.
    public func run() throws -> SoakReport {
        try FileManager.default.createDirectory(atPath: plan.folder, withIntermediateDirectories: true)
        tick = MainLoop.Timer(loop: loop) { [unowned self] in churn() }
        poll = MainLoop.Timer(loop: loop) { [unowned self] in pollDaemon() }
        mixer.onChange = { [unowned self] in mixerChanged() }
        mixer.onChangeAfterUser = { [unowned self] stream, after in
            guard plan.usersAvoidRamps, levels.userChangeRaced(stream) else { return }
            report.racedUserChanges += 1
            trace("the daemon wrote #\(stream.index) " + String(printf: "%.1f", Double(after) / 1000)
                + " ms after the user's change, from the level before it (\(stream.volume.values)"
                + (stream.muted ? " muted" : "") + "): that level is accepted too")
        }
        mixer.connect()
        try startDaemon()
        startedAt = MainLoop.monotonicMicroseconds()
        endAt = startedAt + UInt64(plan.duration * 1_000_000)
        nextStart = startedAt
        nextUserChange = startedAt + random.exponential(perSecond: plan.userChangesPerMinute / 60)
        nextCheckpoint = startedAt + random.around(seconds: plan.checkpointInterval)
        if plan.killInterval > 0 { nextKill = startedAt + random.around(seconds: plan.killInterval) }
        if plan.restartServerCommand != nil { nextRestart = startedAt + random.around(seconds: plan.restartInterval) }
        if plan.outputInterval > 0 { nextOutput = startedAt + random.around(seconds: plan.outputInterval) }
        tick?.schedule(after: 0)
        loop.run()
        report.seconds = Double(MainLoop.monotonicMicroseconds() - startedAt) / 1e6
        report.daemonStarts = daemon.starts
        checkMemory()
        return report
    }

    /// Seconds since the start, for messages.
    var elapsed: Double { Double(MainLoop.monotonicMicroseconds() &- startedAt) / 1e6 }

    /// The soak's own log, `soak.log` in the plan's folder: every start, end, user change, kill and
    /// restart, with the time, to read a violation against the daemon's logs.
    lazy var traceFile: StandardStream? = {
        let fd = open(plan.folder + "/soak.log", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        return fd >= 0 ? StandardStream(descriptor: fd) : nil
    }()

    func trace(_ line: String) {
        let stamp = String(printf: "%8.3f ", elapsed)
        traceFile?.write(stamp + line + "\n")
    }

    func violation(_ what: String) {
        trace("VIOLATION: " + what)
        report.violations.append(.init(at: elapsed, what: what))
        say(String(printf: "%7.1fs  VIOLATION: ", elapsed) + what)
    }

    // MARK: - Churn

    /// The churn's one timer: does what is due, then sleeps until the next thing is.
    func churn() {
        let now = MainLoop.monotonicMicroseconds()
        letLostAppsGo()
        noticeDaemonExit()
        registerStreams()
        if case let .settling(checkpoint) = phase { return evaluate(checkpoint) }
        guard case .churning = phase else { return }
        // An output episode runs to its end before any checkpoint, restart or the end looks.
        if now >= endAt, output == nil { return beginCheckpoint(final: true) }
        endDueApps(now: now)
        uncorkDueApps(now: now)
        if now >= nextStart {
            startApp(now: now)
            nextStart = now + random.exponential(perSecond: plan.ratePerMinute / 60)
        }
        if now >= nextUserChange {
            userChange()
            nextUserChange = now + random.exponential(perSecond: plan.userChangesPerMinute / 60)
        }
        if now < endAt || output != nil { stepOutput(now: now) }
        if daemonReady, daemonDownUntil == nil {
            if now >= nextCheckpoint, output == nil { return beginCheckpoint(final: false) }
            // A checkpoint that is due (waiting for an output episode to end) comes before a kill, whose
            // down time and recovery would put it off further: a 40 s churn on PipeWire, under load, saw
            // its checkpoint due at about 12 s wait for an episode, then a kill, and begin at 20 s.
            if now >= nextKill, now < nextCheckpoint { killDaemon(now: now) }
            if now >= nextRestart, output == nil { return restartServer() }
        }
        scheduleChurn(now: now)
    }

    func scheduleChurn(now: UInt64) {
        var next = min(endAt, nextStart, nextUserChange, nextCheckpoint, nextKill, nextRestart, nextOutput,
                       output?.dueAt ?? .max)
        for app in apps.values { next = min(next, app.endsAt) }
        for time in uncorkAt.values { next = min(next, time) }
        tick?.schedule(at: max(next, now + 1000))
    }

    func startApp(now: UInt64) {
        guard apps.count < plan.maxApps, mixer.isReady, adoptedEntries else { return }
        var kind = SoakStreamKind.random(using: &random)
        if kind == .music, apps.values.filter({ $0.kind == .music }).count >= plan.maxMusic { kind = .navigation }
        // A fault needs a surviving stream to be made on.
        if plan.fault != nil, !faultInjected, !apps.values.contains(where: { $0.kind == .music }) { kind = .music }
        nextNumber += 1
        let pid = kind == .music ? Self.musicPid : Self.musicPid + nextNumber
        // Half the apps set a volume of their own; the others take what the server restores.
        let volume = random.chance(0.5) ? ChannelVolumes(values: [randomLevel(), randomLevel()]) : nil
        let corked = random.chance(plan.corkedShare)
        let lifetime = Double.random(in: kind.lifetime, using: &random)
        let app = SoakApp(loop: loop, number: nextNumber, kind: kind, pid: pid, volume: volume, corked: corked,
                          endsAt: now + UInt64(lifetime * 1_000_000))
        app.onLost = { [unowned self] app in
            lost.append(app)
            tick?.schedule(after: 0)
        }
        guard app.start() else { return }
        if let volume { levels.appAsked(volume, key: kind.restoreKey(number: nextNumber)) }
        trace("app \(app.number) \(kind.rawValue) pid \(pid) starts\(corked ? " corked" : "")"
            + (volume.map { " asking \($0.values)" } ?? "") + String(printf: ", for %.1f s", lifetime))
        apps[app.number] = app
        report.streamsStarted += 1
        if corked {
            report.startedCorked += 1
            if random.chance(0.5) { uncorkAt[app.number] = now + UInt64(Double.random(in: 0.2...(lifetime * 0.8 + 0.2), using: &random) * 1_000_000) }
        }
    }

    /// A raw volume from 35 % to 100 %: a level a user plausibly keeps, never silence.
    func randomLevel() -> ChannelVolumes.Raw {
        ChannelVolumes.Raw.random(in: ChannelVolumes.norm * 35 / 100...ChannelVolumes.norm, using: &random)
    }

    func endDueApps(now: UInt64) {
        for app in apps.values where app.endsAt <= now {
            end(app, abruptly: random.chance(plan.abruptShare))
        }
    }

    func uncorkDueApps(now: UInt64) {
        for (number, time) in uncorkAt where time <= now {
            uncorkAt[number] = nil
            guard let app = apps[number], app.isCorked, app.index != nil else { continue }
            app.uncork()
            report.uncorked += 1
            trace("app \(number) (stream #\(app.index.map(String.init) ?? "?")) uncorks")
        }
    }

    /// Ends an app, as it would quit.
    func end(_ app: SoakApp, abruptly: Bool) {
        if abruptly {
            report.abruptQuits += 1
            if let index = app.index, isInterrupted(index) { report.abruptQuitsMidInterruption += 1 }
        } else {
            report.gracefulQuits += 1
        }
        trace("app \(app.number) (stream #\(app.index.map(String.init) ?? "?")) quits\(abruptly ? " abruptly" : "")")
        app.quit(abruptly: abruptly)
        forget(app)
    }

    func forget(_ app: SoakApp) {
        apps[app.number] = nil
        uncorkAt[app.number] = nil
        if let index = app.index {
            levels.ended(index)
            appOfStream[index] = nil
        }
    }

    func letLostAppsGo() {
        guard !lost.isEmpty else { return }
        for app in lost where apps[app.number] === app {
            report.lostToRestarts += 1
            forget(app)
        }
        lost.removeAll()
    }

    /// Whether the server shows stream `index` away from the user's level (the daemon is acting on it).
    func isInterrupted(_ index: UInt32) -> Bool {
        guard let level = levels.level(of: index), let stream = mixer.streams[index] else { return false }
        return !level.accepts(volume: stream.volume, muted: stream.muted)
    }

    /// The user changes a live stream in the mixer: a new volume (unequal channels), or mute toggled as
    /// the mixer shows it; sometimes, instead, an app quits while the daemon is ducking or muting it.
    func userChange() {
        let now = MainLoop.monotonicMicroseconds()
        let live = levels.streams.keys.filter { mixer.streams[$0] != nil && isAtRest($0, now: now) }.sorted()
        guard let index = live.randomElement(using: &random), let stream = mixer.streams[index] else { return }
        if random.chance(0.3), let victim = live.first(where: isInterrupted), let number = appOfStream[victim],
           let app = apps[number] {
            return end(app, abruptly: true)
        }
        if random.chance(0.2) {
            let muted = !stream.muted
            mixer.setMute(index, muted)
            levels.userMuted(index, muted)
            trace("user \(muted ? "mutes" : "unmutes") #\(index)")
            report.userMuteChanges += 1
        } else {
            userSetsVolume(index)
        }
    }

    /// Whether the user may change stream `index` now: always, or with `usersAvoidRamps` only once its
    /// level has been still for 1.2 s (not in the middle of the daemon's ramp) and the daemon started
    /// (or became ready) 1.2 s ago or more: its recovery writes a moment later, and the 120 s churn on
    /// PipeWire (seed 7338) saw a user's level set 0.12 s after a start overwritten by the ramp that
    /// followed it before the daemon fetched the stream (the known gap of a change just before a ramp
    /// step, docs/tests.md).
    func isAtRest(_ index: UInt32, now: UInt64) -> Bool {
        !plan.usersAvoidRamps
            || (now &- (mixer.levelChangedAt[index] ?? 0) > 1_200_000 && now &- daemonStirredAt > 1_200_000)
    }

    // MARK: - What the mixer sees

    func mixerChanged() {
        if mixer.isReady, !adoptedEntries, !adopting {
            // What was saved before the soak counts as chosen by whoever used the server before.
            adopting = true
            mixer.readSavedEntries { [unowned self] entries in
                levels.adopt(entries ?? [])
                adoptedEntries = true
                report.server = mixer.serverDescription
            }
        }
        registerStreams()
        switch phase {
        case let .settling(checkpoint): evaluate(checkpoint)
        case .reconnecting: reconnected()
        default: break
        }
    }
}
