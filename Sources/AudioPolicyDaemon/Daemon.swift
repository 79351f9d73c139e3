import AudioPolicy
import ControlProtocol
import EventLoop
import FoundationEssentials
import Glibc
import Logging
import SessionBus
import SoundBackend

/// What `audio-policyd run` was asked for.
public struct DaemonOptions: Sendable {
    public var policy: Policy
    /// The base policy file (nil: the embedded default), for the log; what SIGHUP reads again is the
    /// daemon's `loadPolicy` (the base and its drop-ins, looked for anew).
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
    /// Where our Now Playing player is published on the session bus.
    public var nowPlaying = NowPlayingName.own

    public init(policy: Policy, policyPath: String?, socketPath: String, verbose: Bool) {
        self.policy = policy
        self.policyPath = policyPath
        self.socketPath = socketPath
        self.verbose = verbose
    }
}

/// The daemon: builds the parts around the ``Engine``, starts them in order, stops them in reverse,
/// and is the one caller of `Engine.handle`.
///
/// Data flows one way: intake (``ServerIntake``, ``MediaPlayers``, ``ControlIntake``) turns what it hears
/// into ``Event``s and hands them to ``feed(_:)``; the engine's ``Command``s go to ``Actuation`` (journal
/// first, then the server and the players); ``Publication`` reads the result. Everything runs on one
/// libpulse main loop, on one thread, with a single timer armed only while a ramp runs or an engine
/// deadline is pending.
public final class Daemon {
    let loop: MainLoop
    let clock = DaemonClock()
    let live: LiveEngine
    var options: DaemonOptions
    private var log: Logger
    /// Reads the policy in force again on SIGHUP (base and drop-ins); nil: nothing to reload.
    let loadPolicy: (() throws(LocatedErrors) -> Policy)?

    // MARK: The parts

    let outbox = ControlOutbox()
    let players: MediaPlayers
    let actuation: Actuation
    let serverIntake: ServerIntake
    let publication: Publication
    let controlIntake: ControlIntake
    private(set) var control: ControlServer?
    private var signals: MainLoop.SignalHandler?
    /// systemd's notification socket (`Type=notify`), when there is one.
    private let notifier = SystemdNotifier()

    // MARK: Feeding and timing

    /// The one timer: ramp steps and engine deadlines.
    private var timer: MainLoop.Timer?
    /// The X11 display's focus, when `DISPLAY` is set and opens.
    private var x11Focus: X11Focus?
    /// sway's or i3's focus, when `SWAYSOCK`/`I3SOCK` answers; X11's is not followed then.
    private var swayFocus: SwayFocus?
    /// Focus told on the session bus (the KWin script).
    private lazy var focusBus = FocusBus(log: log) { [unowned self] event in self.feed(event) }
    /// Events found while carrying out commands, fed on the next turn of the loop (feeding the engine
    /// then would interleave two decisions).
    private var later: [Event] = []
    private var laterTimer: MainLoop.Timer?
    private var stopping = false
    /// The stop's last step has run (the journal closed, the loop told to quit once the server drained).
    private(set) var stopped = false

    /// Called when the daemon has connected and applied the policy to the streams already there.
    public var onReady: () -> Void = {}

    /// - Parameter server: makes the connection to the sound server, once per (re)connect; libpulse's
    ///   (``BackendChoice/pulse``) unless a test hands in a fake (or the benchmark, an instrumented one).
    public init(options: DaemonOptions, loop: MainLoop = MainLoop(),
                loadPolicy: (() throws(LocatedErrors) -> Policy)? = nil,
                server: @escaping (MainLoop) -> any StreamServer = BackendChoice.pulse.connection()) {
        self.loop = loop
        self.options = options
        self.loadPolicy = loadPolicy
        var log = Logger(label: "audio-policyd")
        log.logLevel = options.verbose ? .debug : .info
        self.log = log
        live = LiveEngine(Engine(policy: options.policy))
        let streams = LiveStreams()
        players = MediaPlayers(loop: loop, log: log, streams: streams, outbox: outbox)
        let journal = Journal(store: options.journalPath.map { JournalStore(path: $0, durableCopy: options.journalDurableCopy) })
        actuation = Actuation(loop: loop, log: log, clock: clock, streams: streams, players: players, journal: journal)
        serverIntake = ServerIntake(loop: loop, log: log, makeServer: server, streams: streams, actuation: actuation,
                                    players: players)
        publication = Publication(log: log, loop: loop, clock: clock, reading: live, actuation: actuation, players: players,
                                  outbox: outbox)
        controlIntake = ControlIntake(log: log, reading: live, players: players, publication: publication, outbox: outbox)
        wire()
    }

    /// Connects the parts' outputs: intake to ``feed(_:)``, player and Now Playing news to publication.
    private func wire() {
        let feed: (Event) -> Void = { [unowned self] event in self.feed(event) }
        let feedLater: (Event) -> Void = { [unowned self] event in self.feedLater(event) }
        players.feed = feed
        players.feedLater = feedLater
        players.onPlayerEvent = { [unowned self] player in self.publication.publish(ControlEvent(event: .player, player: player)) }
        players.onChange = { [unowned self] in self.publication.nowPlaying.refresh() }
        publication.nowPlaying.publishedName = options.nowPlaying
        players.onBus = { [unowned self] bus in
            self.publication.nowPlaying.busChanged(bus)
            self.focusBus.busChanged(bus)
        }
        actuation.feedLater = feedLater
        actuation.audibility = live.engine.policy.audibility
        actuation.onAudibility = { [unowned self] index, audible in
            guard let id = self.actuation.streams.id(of: index) else { return }
            self.feed(.audibility(id, audible: audible))
        }
        serverIntake.feed = feed
        serverIntake.onReady = { [unowned self] in self.becameReady() }
        serverIntake.onGone = { [unowned self] in self.serverGone() }
        serverIntake.onStreamEnded = { [unowned self] input, id in
            self.publication.nowPlaying.streamEnded(input, id: id)
            // Its ramp went with it: it may have been the last restore the stop was waiting for.
            if self.stopping, self.actuation.rampsIdle { self.finishStop() }
        }
        controlIntake.feed = feed
        controlIntake.serverName = { [unowned self] in self.serverIntake.serverName }
    }

    /// Runs until SIGTERM/SIGINT (then restores everything first). Returns the exit code.
    public func run() throws -> Int32 {
        try start()
        let code = loop.run()
        if code < 0 { log.critical("the event loop failed (\(String(cString: strerror(errno)))): stopping") }
        serverIntake.server?.stopServing()
        actuation.journal.store?.finish()
        control?.shutdown()
        control = nil
        return code
    }

    /// Starts the parts in order: the timers and signals, the control socket, the journal (what an
    /// earlier run left), the sound server, the session bus. The caller runs the loop (``run()``, or a
    /// test that iterates it). Signals are process-wide: a test that runs several daemons in one process
    /// leaves them.
    func start(handlingSignals: Bool = true) throws {
        timer = MainLoop.Timer(loop: loop) { [unowned self] in self.timerFired() }
        laterTimer = MainLoop.Timer(loop: loop) { [unowned self] in self.feedDeferred() }
        if handlingSignals {
            signals = try MainLoop.SignalHandler(loop: loop, signals: [SIGTERM, SIGINT, SIGHUP]) { [unowned self] signal in
                signal == SIGHUP ? self.reloadPolicy() : self.stop()
            }
        }
        let control = try ControlServer(path: options.socketPath) { [loop] fd, readiness, handler in
            MainLoop.IOWatch(loop: loop, fd: fd, events: readiness == .readable ? .readable : .writable) { _ in handler() }
        }
        control.onWarning = { [unowned self] message in self.log.warning("\(message)") }
        control.onRequest = { [unowned self] client, line in self.controlIntake.handleRequest(line, from: client) }
        control.onDisconnect = { [unowned self] client in self.controlIntake.clientLeft(client) }
        control.onReplied = { [unowned self] client in self.outbox.replied(to: client) }
        self.control = control
        outbox.server = control
        log.info("policy \(options.policy.files.joined(separator: " + ")); control socket \(options.socketPath)")
        if options.raisePriority { raisePriority() }
        actuation.openJournal()
        serverIntake.connect()
        players.start()
        // Under sway Xwayland's DISPLAY exists too, and knows nothing of Wayland windows: sway's IPC first.
        swayFocus = SwayFocus(loop: loop, log: log) { [unowned self] event in self.feed(event) }
        if swayFocus == nil { x11Focus = X11Focus(loop: loop, log: log) { [unowned self] event in self.feed(event) } }
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
    public var liveStreamCount: Int { actuation.streams.count }
    /// The sound server it is connected to (`pulseaudio 16.1`), if it is.
    public var connectedServer: String? { serverIntake.serverName }
    /// How much it logs.
    public var logLevel: Logger.Level {
        get { log.logLevel }
        set {
            log.logLevel = newValue
            players.log.logLevel = newValue
            actuation.log.logLevel = newValue
            serverIntake.log.logLevel = newValue
            publication.log.logLevel = newValue
            publication.nowPlaying.log.logLevel = newValue
            controlIntake.log.logLevel = newValue
        }
    }

    // MARK: - Feeding the engine

    /// Hands one event to the engine and its commands to actuation, then publication.
    func feed(_ event: Event) {
        loop.assertOnLoopThread()
        publication.publishInput(event)
        carryOut(live.engine.handle(event, at: clock.now))
    }

    private func carryOut(_ commands: [Command]) {
        actuation.execute(commands)
        publication.published(commands)
        controlIntake.began(commands)
        armTimer()
    }

    /// Feeds `event` on the next loop iteration.
    private func feedLater(_ event: Event) {
        later.append(event)
        laterTimer?.schedule(after: 0)
    }

    private func feedDeferred() {
        let events = later
        later = []
        for event in events { feed(event) }
    }

    /// Arms the one timer for the next ramp step or engine deadline, or disarms it when there is none.
    private func armTimer() {
        guard let timer else { return }
        let at = clock.nowPrecise
        let deadline = live.nextDeadline.map(Double.init)
        guard let next = [actuation.nextStep(after: at), deadline].compactMap({ $0 }).min() else {
            timer.cancel()
            return
        }
        timer.schedule(at: clock.monotonic(at: next))
    }

    private func timerFired() {
        actuation.stepRamps()
        if let due = live.nextDeadline, due <= clock.now { feed(.tick) }
        armTimer()
        if stopping, actuation.rampsIdle { finishStop() }
    }

    // MARK: - The server coming and going

    /// Connected, the policy applied to the streams already there, and what an earlier run left
    /// changed put back: tell systemd (Type=notify) and whoever waits.
    private func becameReady() {
        let server = serverIntake.serverName ?? "the sound server"
        notifier.send("READY=1\nSTATUS=connected to \(server); \(actuation.streams.count) stream(s)")
        onReady()
    }

    /// The server went away and its streams ended for the engine: no hold lingers over the streams of
    /// the next one. Returns whether to connect again (not while stopping: there is nothing to restore).
    private func serverGone() -> Bool {
        feed(.serverGone)
        if stopping {
            loop.quit(0)
            return false
        }
        return true
    }

    // MARK: - Policy reload and stop

    /// Reads the base and its drop-ins again (drop-ins added or removed since count); a policy that
    /// does not load is logged, each error at its `FILE:LINE:COLUMN`, and the one in force stays.
    func reloadPolicy() {
        guard let loadPolicy else {
            log.info("SIGHUP: running on the embedded default policy; nothing to reload")
            return
        }
        do {
            let policy = try loadPolicy()
            feed(.policyReplaced(policy))
            actuation.audibility = policy.audibility
            log.info("SIGHUP: policy \(policy.files.joined(separator: " + ")) reloaded")
        } catch {
            log.error("SIGHUP: \(error)\nkeeping the policy in force (\(live.engine.policy.files.joined(separator: " + ")))")
        }
    }

    /// Clean stop, the parts in reverse: no more players' news or reconnecting, every duck restored and
    /// every policy mute undone, then the journal closed and the server drained before the loop quits.
    public func stop() {
        guard !stopping else { return }
        stopping = true
        players.stop()
        notifier.send("STOPPING=1")
        log.info("stopping: restoring every stream")
        // The engine restores every stream and, from now on, changes none (``Event/stop(fade:)``).
        feed(.stop(fade: options.stopFade))
        if actuation.rampsIdle { finishStop() }
    }

    private func finishStop() {
        guard !stopped else { return }
        stopped = true
        timer?.cancel()
        publication.publishWaiting()
        actuation.stopMeters()
        actuation.closeJournal()
        guard let server = actuation.server, server.state == .ready else {
            loop.quit(0)
            return
        }
        // Let the server take our last writes before we hang up.
        server.drain { [loop] in loop.quit(0) }
    }
}
