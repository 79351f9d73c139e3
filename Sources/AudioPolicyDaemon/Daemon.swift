import AudioPolicy
import ControlProtocol
import EventLoop
import FoundationEssentials
import Glibc
import Logging
import SoundServer

/// What `audio-policyd run` was asked for.
public struct DaemonOptions: Sendable {
    public var policy: Policy
    /// The file to read again on SIGHUP (nil: the embedded default, nothing to reload).
    public var policyPath: String?
    public var socketPath: String
    public var verbose: Bool
    /// How long the clean-stop restore ramps take, ms.
    public var stopFade: Milliseconds = 200
    /// The crash-safe journal of what the daemon changed: its log (``JournalStore/defaultLogPath(environment:)``
    /// for `run`, on tmpfs) and where it is made durable (``JournalStore/defaultPath(environment:)``; nil:
    /// the log itself is synced). No log: the daemon keeps no journal.
    public var journalPath: String?
    public var journalDurableCopy: String?
    /// Ask for the sound server's main-thread priority (``ProcessPriority``) when running.
    public var raisePriority = true

    public init(policy: Policy, policyPath: String?, socketPath: String, verbose: Bool) {
        self.policy = policy
        self.policyPath = policyPath
        self.socketPath = socketPath
        self.verbose = verbose
    }
}

/// The daemon: the shell around the ``Engine``.
///
/// Everything runs on one libpulse main loop, on one thread: server events, the control socket,
/// signals and the single timer (armed only while a ramp runs or a grace time/hold is pending).
/// Server callbacks become ``Event``s; the engine's ``Command``s become libpulse calls.
public final class Daemon {
    let loop: MainLoop
    var engine: Engine {
        didSet { engineDeadline = nil }
    }
    /// ``Engine/nextDeadline`` (a walk over every stream), kept until the engine changes: the timer is
    /// re-armed after every ramp step.
    private var engineDeadline: Milliseconds??
    var options: DaemonOptions
    var log: Logger
    /// Reloads the policy file on SIGHUP; nil when running on the embedded default.
    let loadPolicy: ((String) throws -> Policy)?

    /// The sound server connection: a ``PulseConnection`` made by ``makeServer`` (a fake in unit tests).
    var pulse: (any StreamServer)?
    /// Makes a new connection for each (re)connect.
    let makeServer: (MainLoop) -> any StreamServer
    var serverName: String?
    var streams: [UInt32: LiveStream] = [:]
    var ramps = RampStepper()
    /// Levels we wrote, by stream-restore key: what the server may hand a key's next stream.
    var savedWrites = SavedWrites()
    /// The one timer: ramp steps and engine deadlines.
    var timer: MainLoop.Timer?
    /// Armed only while the sound server is gone, to connect again with backoff.
    var reconnectTimer: MainLoop.Timer?
    /// Armed once, right after a change that grew the journal's log too long (``compactJournalLater()``).
    var compactionTimer: MainLoop.Timer?
    /// Wakes the loop when the journal's sync thread could not write the durable copy (or can again).
    var durableCopyWatch: MainLoop.IOWatch?
    var control: ControlServer?
    var signals: MainLoop.SignalHandler?
    var reconnectDelay: UInt64 = 250_000
    var stopping = false
    /// Interruptions begun over the control socket, by client, so a client that vanishes ends its own.
    var hooksByClient: [ControlServer.ClientID: Set<StreamID>] = [:]
    var nextHook = 1
    /// From the server announcing a stream to our volume requests, for `bench`.
    public var reactionTimes: [ReactionTime] = []
    public var recordReactionTimes = false
    /// From a measured stream's first loud peak to the ducks it caused (`announced`: when the stream
    /// appeared; `described`: the peak arrived; `acted`: requests sent), for `bench`.
    public var audibilityReactionTimes: [ReactionTime] = []
    /// Called when the daemon has connected and applied the policy to the streams already there.
    public var onReady: () -> Void = {}
    /// What the daemon has changed and not yet put back, on disk (Journal/, Daemon+Journal).
    var journal: Journal
    /// Index of streams whose saved entry is being repaired from the journal.
    var journalRepairs: Set<UInt32> = []
    /// The last decisions, for `status` and `top`.
    var decisions = DecisionLog()
    /// systemd's notification socket (`Type=notify`), when there is one.
    let notifier = SystemdNotifier()
    /// MPRIS players, our Now Playing player, claims and subscribers (Daemon+Players, +NowPlaying, +Hooks).
    let media = MediaState()
    /// Peak meters of the streams whose sound the engine asked about (Daemon+Meters).
    let meters = StreamMeters()
    /// Capture streams recording from a microphone now, by source-output index (Daemon+Meters).
    var recordingCaptures: Set<UInt32> = []

    /// Monotonic µs at start: the engine's clock counts milliseconds from here.
    let epoch: UInt64

    /// - Parameter server: makes the connection to the sound server, once per (re)connect; the real
    ///   ``PulseConnection`` unless a test hands in a fake.
    public init(options: DaemonOptions, loop: MainLoop = MainLoop(),
                loadPolicy: ((String) throws -> Policy)? = nil,
                server: @escaping (MainLoop) -> any StreamServer = Daemon.pulseConnection) {
        self.loop = loop
        self.makeServer = server
        self.options = options
        self.engine = Engine(policy: options.policy)
        self.loadPolicy = loadPolicy
        self.journal = Journal(store: options.journalPath.map { JournalStore(path: $0, durableCopy: options.journalDurableCopy) })
        self.epoch = MainLoop.monotonicMicroseconds()
        var log = Logger(label: "audio-policyd")
        log.logLevel = options.verbose ? .debug : .info
        self.log = log
    }

    /// The real sound server: libpulse's connection (to PulseAudio or pipewire-pulse).
    public static func pulseConnection(loop: MainLoop) -> any StreamServer {
        PulseConnection(loop: loop, applicationName: "audio-policyd")
    }

    /// Runs until SIGTERM/SIGINT (then restores everything first). Returns the exit code.
    public func run() throws -> Int32 {
        try start()
        let code = loop.run()
        journal.store?.finish()
        control?.shutdown()
        control = nil
        return code
    }

    /// Sets everything up and starts connecting; the caller runs the loop (``run()``, or a test that
    /// iterates it). Signals are process-wide: a test that runs several daemons in one process leaves them.
    func start(handlingSignals: Bool = true) throws {
        timer = MainLoop.Timer(loop: loop) { [unowned self] in self.timerFired() }
        reconnectTimer = MainLoop.Timer(loop: loop) { [unowned self] in self.connect() }
        if handlingSignals {
            signals = try MainLoop.SignalHandler(loop: loop, signals: [SIGTERM, SIGINT, SIGHUP]) { [unowned self] signal in
                signal == SIGHUP ? self.reloadPolicy() : self.stop()
            }
        }
        control = try ControlServer(path: options.socketPath) { [loop] fd, readiness, handler in
            MainLoop.IOWatch(loop: loop, fd: fd, events: readiness == .readable ? .readable : .writable) { _ in handler() }
        }
        control?.onWarning = { [unowned self] message in self.log.warning("\(message)") }
        control?.onRequest = { [unowned self] client, line in self.handleRequest(line, from: client) }
        control?.onDisconnect = { [unowned self] client in self.clientLeft(client) }
        log.info("policy \(options.policy.source); control socket \(options.socketPath)")
        if options.raisePriority { raisePriority() }
        meters.onAudibility = { [unowned self] index, audible in self.audibilityMeasured(index, audible: audible) }
        openJournal()
        connect()
        startPlayers()
    }

    private func raisePriority() {
        switch ProcessPriority.raise() {
        case let .raised(nice):
            log.info("running at nice \(nice), as the sound server's main thread does")
        case let .refused(nice, reason):
            log.info("running at nice \(nice): nice \(ProcessPriority.desiredNice) was refused (\(reason))")
        case .alreadyHigh:
            break
        }
    }

    // MARK: - For a benchmark that embeds the daemon

    /// The loop the daemon runs on: an embedding benchmark drives its load from the same thread.
    public var eventLoop: MainLoop { loop }
    /// How many playback streams the daemon follows now.
    public var liveStreamCount: Int { streams.count }
    /// The sound server it is connected to (`pulseaudio 16.1`), if it is.
    public var connectedServer: String? { serverName }
    /// How much it logs.
    public var logLevel: Logger.Level {
        get { log.logLevel }
        set { log.logLevel = newValue }
    }

    // MARK: - Clock

    /// Milliseconds since start, fractional, for ramp steps.
    var nowPrecise: Double { Double(MainLoop.monotonicMicroseconds() &- epoch) / 1000 }
    /// Milliseconds since start: the engine's `now`.
    var now: Milliseconds { Milliseconds(nowPrecise) }

    // MARK: - Feeding the engine

    func feed(_ event: Event) {
        publishInput(event)
        let commands = engine.handle(event, at: now)
        // Stopping: the engine has released every stream. Nothing it decides now may be carried out (a
        // grace time running out, or a stream changing, would mute or duck again what the stop is
        // restoring); only the repair of a stream that ends meanwhile still is.
        execute(stopping ? commands.filter { if case .repairSaved = $0 { true } else { false } } : commands)
        armTimer()
    }

    /// Arms the one timer for the next ramp step or engine deadline, or disarms it when there is none.
    func armTimer() {
        guard let timer else { return }
        let at = nowPrecise
        // While stopping, engine deadlines are of no interest (and, never fed, would stay due).
        let deadline = stopping ? nil : nextEngineDeadline.map(Double.init)
        let next = [ramps.nextStep(after: at), deadline].compactMap { $0 }.min()
        guard let next else {
            timer.cancel()
            return
        }
        timer.schedule(at: epoch &+ UInt64(max(0, next) * 1000))
    }

    private var nextEngineDeadline: Milliseconds? {
        if let known = engineDeadline { return known }
        let next = engine.nextDeadline
        engineDeadline = .some(next)
        return next
    }

    private func timerFired() {
        stepRamps()
        if !stopping, let due = nextEngineDeadline, due <= now { feed(.tick) }
        armTimer()
        if stopping, ramps.isIdle { finishStop() }
    }

    // MARK: - Policy reload and stop

    func reloadPolicy() {
        guard let path = options.policyPath, let loadPolicy else {
            log.info("SIGHUP: running on the embedded default policy; nothing to reload")
            return
        }
        do {
            let policy = try loadPolicy(path)
            options.policy = policy
            execute(engine.replacePolicy(policy, at: now))
            armTimer()
            log.info("SIGHUP: policy \(path) reloaded")
        } catch {
            log.error("SIGHUP: \(error)\nkeeping the policy in force (\(engine.policy.source))")
        }
    }

    /// Clean stop: every duck is restored and every policy mute undone before the loop quits.
    public func stop() {
        guard !stopping else { return }
        stopping = true
        notifier.send("STOPPING=1")
        log.info("stopping: restoring every stream")
        execute(engine.releaseAll(at: now, fade: options.stopFade))
        armTimer()
        if ramps.isIdle { finishStop() }
    }

    private func finishStop() {
        timer?.cancel()
        meters.stopAll()
        closeJournal()
        guard let pulse, pulse.state == .ready else {
            loop.quit(0)
            return
        }
        // Let the server take our last writes before we hang up.
        pulse.drain { [loop] in loop.quit(0) }
    }
}
