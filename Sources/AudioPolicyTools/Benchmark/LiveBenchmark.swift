import AudioPolicy
import AudioPolicyDaemon
import EventLoop
import FoundationEssentials
import FoundationGaps
import Glibc
import Logging
import PulseBackend
import SoundBackend

/// Measures the daemon on the real sound server in `PULSE_SERVER`: reaction time from the server
/// announcing a navigation prompt to our duck requests for every stream, with `streams` other
/// streams alive; wake-ups while idle with those streams playing; resident memory.
///
/// The streams are real: `streams` playback streams from one client process (``StreamGenerator``, run
/// as `audio-policyd bench-streams`: PulseAudio accepts at most 64 client connections), playing
/// silence or held corked, which the engine weighs on every decision (the benchmark's policy classes
/// them `mix`, so they are not written to), plus one music stream (`pacat`) that each navigation
/// prompt (`pacat`) ducks. The daemon runs in this process, on its usual loop, with its journal.
public final class LiveBenchmark {
    public struct Result: Sendable {
        public var server: String?
        public var streams: Int
        public var corked: Bool
        /// Server announcement → duck requests sent, µs.
        public var reaction: Percentiles?
        /// Of which: the server answering our request for the new stream's description, µs.
        public var serverAnswer: Percentiles?
        /// Of which: the daemon, from that answer to the duck requests sent, µs.
        public var daemonShare: Percentiles?
        public var idleSeconds: Int
        public var idleWakeups: Int
        public var residentKiB: Int
        public var peakResidentKiB: Int
        /// With the music, a silent speech-dispatcher stream open (measured, since it would duck the
        /// music if it spoke): wake-ups per second, and CPU (ms per s) of the whole process.
        public var measuredWakeupsPerSecond: Double = 0
        public var measuredCPUMillisecondsPerSecond: Double = 0
        /// Phrases that start after 6 s of silence in an open stream: the meter's first loud peak to
        /// the duck requests (the daemon's part), µs.
        public var audibleDaemonShare: Percentiles?
        /// The same, from the moment the phrase's first sound was due (stream seen + the silent lead): meter, server
        /// buffering and daemon together, µs (an estimate: the stream's own start latency counts too).
        public var audibleTotal: Percentiles?
        /// Output loss: a headset-like null sink with a tone playing on it unloaded; the daemon receiving the
        /// server's SINK REMOVE event → its mute request for the stream, µs.
        public var outputLoss: Percentiles?
        /// Unloads after which no mute request came within 5 s.
        public var outputLossMissed = 0
    }

    /// The silence before each phrase of the audibility benchmark, ms.
    static let phraseLead = 6000

    let streamCount: Int
    let corked: Bool
    let prompts: Int
    let idleSeconds: Int
    let outputLosses: Int
    private var children: [ChildProcess] = []
    private var loadedModules: [String] = []
    private var result: Result?
    private var failure: String?

    public init(streams: Int = 200, corked: Bool = false, prompts: Int = 30, idleSeconds: Int = 10,
                outputLosses: Int = 30) {
        self.outputLosses = outputLosses
        self.streamCount = streams
        self.corked = corked
        self.prompts = prompts
        self.idleSeconds = idleSeconds
    }

    public func run() throws -> Result {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("audio-policyd-bench-\(getpid())").path
        // With a journal, as `run` keeps it: its log on tmpfs (a desktop's $XDG_RUNTIME_DIR; /dev/shm
        // where there is none), made durable in the background; its one write per decision is part of
        // the reaction.
        let tmpfs = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"]
            ?? (FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : folder)
        let journalLog = tmpfs + "/audio-policyd-bench-\(getpid())-journal.json"
        defer {
            for child in children where child.isRunning { child.signal(SIGTERM) }
            for module in loadedModules { pactl(["unload-module", module]) }
            try? FileManager.default.removeItem(atPath: folder)
            unlink(journalLog)
        }
        var options = DaemonOptions(policy: Self.policy, policyPath: nil, socketPath: folder + "/control",
                                    verbose: false)
        options.stopFade = 0
        options.journalPath = journalLog
        options.journalDurableCopy = folder + "/journal.json"
        // The real server, timed from outside the daemon (a new one on each reconnect).
        var timed: TimedServer?
        let daemon = Daemon(options: options, server: { loop in
            let server = TimedServer(loop: loop)
            timed = server
            return server
        })
        daemon.logLevel = ProcessInfo.processInfo.environment["BENCH_LOG"] != nil ? .debug : .warning
        let driver = Driver(benchmark: self, daemon: daemon) { timed }
        daemon.onReady = { [unowned driver] in driver.begin() }
        _ = try daemon.run()
        if let failure { throw BenchmarkError(message: failure) }
        guard let result else { throw BenchmarkError(message: "the benchmark did not finish") }
        return result
    }

    struct BenchmarkError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }

    /// The default policy, with the generators (role `abstract`) in a class of their own, kind mix.
    public static var policy: Policy {
        var policy = Policy.embeddedDefault
        policy.classes["background"] = InterruptionClass(name: "background", kind: .mix)
        policy.rules.insert(Rule(name: "benchmark generators",
                                 matchers: [PropertyMatcher(key: "media.role", patterns: [Glob("abstract")])],
                                 className: "background"), at: 0)
        return policy
    }

    /// PipeWire's mixer takes at most 128 streams into one sink (0.3.65: `mixer-dsp` refuses the
    /// 129th port), so on PipeWire the other streams beyond this many go to null sinks of their own,
    /// loaded for the run and unloaded after it. PulseAudio keeps them all on its one sink.
    static let streamsPerPipeWireSink = 100

    /// Loads the null sinks the other streams need on `server` and returns their names.
    func loadSinks(server: String?) -> [String]? {
        guard server?.contains("PipeWire") == true, streamCount > Self.streamsPerPipeWireSink else { return [] }
        let needed = (streamCount + Self.streamsPerPipeWireSink - 1) / Self.streamsPerPipeWireSink
        var names: [String] = []
        for number in 1...needed {
            let name = "audio-policyd-bench-\(getpid())-\(number)"
            guard let module = pactl(["load-module", "module-null-sink", "sink_name=\(name)"]) else { return nil }
            loadedModules.append(module)
            names.append(name)
        }
        return names
    }

    /// Runs `pactl` and returns its output, trimmed; nil (with `failure` set) when it fails.
    @discardableResult
    func pactl(_ arguments: [String]) -> String? {
        // Its output (and any complaint) goes to a file of its own, read once it has exited.
        let output = FileManager.default.temporaryDirectory.path + "/audio-policyd-bench-\(getpid())-pactl"
        defer { unlink(output) }
        unlink(output)
        let process: ChildProcess
        do {
            process = try ChildProcess(["/usr/bin/pactl"] + arguments, environment: ProcessInfo.processInfo.environment,
                                       log: output)
        } catch {
            failure = "cannot start pactl: \(error)"
            return nil
        }
        let exit = process.wait(timeout: 60)
        let text = String(decoding: FileManager.default.contents(atPath: output) ?? Data(), as: UTF8.self)
        guard exit == .code(0) else {
            failure = "pactl \(arguments.joined(separator: " ")) failed (\(exit?.description ?? "no exit in 60 s")): "
                + text.trimmingWhitespace()
            return nil
        }
        return text.trimmingWhitespace()
    }

    /// Starts the other streams: this program's `bench-streams`, in a process of its own.
    func startGenerators(sinks: [String]) -> Bool {
        startGenerator(["--count", String(streamCount), "--property", "media.role=abstract",
                        "--property", "application.name=bench-streams"] + (corked ? ["--corked"] : [])
            + sinks.flatMap { ["--sink", $0] })
    }

    /// Starts the music the prompts duck: a tone (a meter hears it as sound, as it would real music).
    func startMusic() -> Bool {
        startGenerator(["--count", "1", "--tone", "--property", "media.role=music",
                        "--property", "application.name=bench-music"])
    }

    /// The headset of the output-loss figure: a null sink with a Bluetooth headset's properties (as the
    /// integration tests' `OutputTests` load it), a device address of its own for each `number`, so that
    /// no round's headset counts as the one before back. Returns the module's index.
    func loadHeadset(name: String, number: Int) -> String? {
        let address = String(printf: "AC:80:0A:12:%02X:%02X", (number / 256) % 256, number % 256)
        let properties = "device.description=bench-headset device.string=\(address) api.bluez5.address=\(address) "
            + "device.bus=bluetooth device.form_factor=headset"
        guard let module = pactl(["load-module", "module-null-sink", "sink_name=\(name)",
                                  "sink_properties=\"\(properties)\""]) else { return nil }
        loadedModules.append(module)
        return module
    }

    /// Music (a tone, from `bench-streams`) playing on `sink`; terminated to end it.
    func startMusic(on sink: String) -> ChildProcess? {
        guard startGenerator(["--count", "1", "--tone", "--property", "media.role=music",
                              "--property", "application.name=bench-music-headset", "--sink", sink]) else { return nil }
        return children.last
    }

    /// `pactl unload-module`, not waited for: the daemon's loop must stay free to take the removal.
    func unloadModule(_ module: String) -> ChildProcess? {
        loadedModules.removeAll { $0 == module }
        do {
            let process = try ChildProcess(["/usr/bin/pactl", "unload-module", module],
                                           environment: ProcessInfo.processInfo.environment, log: "/dev/null")
            children.append(process)
            return process
        } catch {
            failure = "cannot start pactl: \(error)"
            return nil
        }
    }

    private func startGenerator(_ arguments: [String]) -> Bool {
        let executable = DaemonLaunch.thisExecutable() ?? CommandLine.arguments[0]
        do {
            children.append(try ChildProcess([executable, "bench-streams"] + arguments,
                                             environment: ProcessInfo.processInfo.environment, log: "/dev/null"))
        } catch {
            failure = "cannot start \(executable) bench-streams: \(error)"
            return false
        }
        return true
    }

    /// Plays silence (or the WAV `file`) as a stream with the given properties until terminated.
    func play(_ properties: [String: String], file: String? = nil) -> ChildProcess? {
        let process: ChildProcess
        do {
            process = try ChildProcess([file == nil ? "/usr/bin/pacat" : "/usr/bin/paplay"]
                + (file == nil ? ["--playback", "--latency-msec=200"] : ["--latency-msec=50"])
                + properties.sorted { $0.key < $1.key }.map { "--property=\($0.key)=\($0.value)" } + [file ?? "/dev/zero"],
                environment: ProcessInfo.processInfo.environment, log: "/dev/null")
        } catch {
            failure = "cannot start pacat: \(error)"
            return nil
        }
        children.append(process)
        return process
    }

    /// Steps through the scenario on the daemon's own loop, with one timer.
    private final class Driver {
        unowned let benchmark: LiveBenchmark
        let daemon: Daemon
        var timer: MainLoop.Timer?
        var step: () -> Void = {}
        var promptsLeft = 0
        var prompt: ChildProcess?
        var seen = 0
        var idleStart = ProcessStats.current()
        var started = false
        var waitedTicks = 0
        var idleEnd = ProcessStats.current()
        var speech: ChildProcess?
        var measuredStart = (ProcessStats.current(), 0)
        var measuredWakeups = 0.0
        var measuredCPU = 0.0
        var phraseFile = ""
        var phrasesLeft = 0
        var phraseStartedAt: UInt64 = 0
        /// Each phrase's reaction: its own stream's first loud peak to the ducks it caused.
        var phraseReactions: [ReactionTime] = []
        /// The prompts' reactions, taken when the prompts are done: the phrases that follow are new streams
        /// too, and timing them as prompts put ten screen-reader starts (each given a meter) in the figure.
        var promptReactions: [ReactionTime] = []

        /// The server the daemon is connected to now, with its stopwatches.
        let server: () -> TimedServer?
        var timing: TimedServer? { server() }

        init(benchmark: LiveBenchmark, daemon: Daemon, server: @escaping () -> TimedServer?) {
            self.server = server
            self.benchmark = benchmark
            self.daemon = daemon
        }

        func after(_ milliseconds: UInt64, _ next: @escaping () -> Void) {
            step = next
            timer?.schedule(after: milliseconds * 1000)
        }

        func fail(_ message: String) {
            benchmark.failure = message
            daemon.stop()
        }

        func begin() {
            guard !started else { return }
            started = true
            timer = MainLoop.Timer(loop: daemon.eventLoop) { [unowned self] in self.step() }
            guard let sinks = benchmark.loadSinks(server: daemon.connectedServer),
                  benchmark.startGenerators(sinks: sinks) else { return fail(benchmark.failure ?? "") }
            guard benchmark.startMusic() else { return fail(benchmark.failure ?? "") }
            waitedTicks = 0
            after(100, waitForStreams)
        }

        func waitForStreams() {
            waitedTicks += 1
            guard daemon.liveStreamCount >= benchmark.streamCount + 1 else {
                return waitedTicks > 600 ? fail("only \(daemon.liveStreamCount) of \(benchmark.streamCount) streams appeared")
                    : after(100, waitForStreams)
            }
            promptsLeft = benchmark.prompts
            timing?.clearReactions()
            timing?.recording = true
            after(500, nextPrompt)
        }

        func nextPrompt() {
            guard promptsLeft > 0 else {
                timing?.recording = false
                promptReactions = timing?.reactions ?? []
                // Let the last restore ramp finish, then count wake-ups while idle.
                return after(2000) { [unowned self] in
                    self.idleStart = ProcessStats.current()
                    self.after(UInt64(self.benchmark.idleSeconds) * 1000, self.measureIdle)
                }
            }
            promptsLeft -= 1
            seen = (timing?.reactions ?? []).count
            prompt = benchmark.play(["media.role": "navigation", "application.name": "bench-prompt"])
            waitedTicks = 0
            after(50, waitForPrompt)
        }

        func waitForPrompt() {
            waitedTicks += 1
            guard (timing?.reactions ?? []).count > seen else {
                return waitedTicks > 200 ? fail("the prompt stream never appeared") : after(50, waitForPrompt)
            }
            prompt?.signal(SIGTERM)
            // Hold (500 ms) and restore ramp (1000 ms) of the default policy, and a margin.
            after(1800, nextPrompt)
        }

        func measureIdle() {
            idleEnd = ProcessStats.current()
            // A screen reader's stream, open and silent next to the music: measured.
            speech = benchmark.play(Self.speech)
            after(3000) { [unowned self] in
                self.measuredStart = (ProcessStats.current(), Self.cpuMicroseconds())
                self.after(UInt64(self.benchmark.idleSeconds) * 1000, self.measureSilentSpeech)
            }
        }

        func measureSilentSpeech() {
            let (start, cpu) = measuredStart
            let seconds = Double(benchmark.idleSeconds)
            measuredWakeups = Double(ProcessStats.current().contextSwitches - start.contextSwitches - 1) / seconds
            measuredCPU = Double(Self.cpuMicroseconds() - cpu) / 1000 / seconds
            speech?.signal(SIGTERM)
            guard let file = try? Self.phraseFile() else { return fail("cannot write the phrase file") }
            phraseFile = file
            phrasesLeft = 10
            timing?.clearAudibilityReactions()
            timing?.recording = true
            after(2500, nextPhrase)
        }

        func nextPhrase() {
            guard phrasesLeft > 0 else {
                timing?.recording = false
                try? FileManager.default.removeItem(atPath: phraseFile)
                lossesLeft = benchmark.outputLosses
                return after(1000, nextOutputLoss)
            }
            phrasesLeft -= 1
            phraseStartedAt = MainLoop.monotonicMicroseconds()
            speech = benchmark.play(Self.speech, file: phraseFile)
            waitedTicks = 0
            after(100, waitForPhrase)
        }

        func waitForPhrase() {
            waitedTicks += 1
            guard let reaction = (timing?.audibilityReactions ?? []).first(where: { $0.announced >= phraseStartedAt }) else {
                return waitedTicks > 120 ? fail("no duck for a phrase after its silence") : after(100, waitForPhrase)
            }
            phraseReactions.append(reaction)
            timing?.clearAudibilityReactions()
            speech?.signal(SIGTERM)
            after(3000, nextPhrase)
        }

        // MARK: Output loss

        var lossesLeft = 0
        var lossNumber = 0
        var lossMissed = 0
        var lossReactions: [UInt64] = []
        var headsetModule = ""
        var headsetMusic: ChildProcess?
        var unload: ChildProcess?
        var streamsBefore = 0

        /// Loads a headset, plays a tone on it and lets the daemon hear it for a second.
        func nextOutputLoss() {
            guard lossesLeft > 0 else {
                timing?.recording = false
                return finish()
            }
            lossesLeft -= 1
            lossNumber += 1
            let name = "audio-policyd-bench-headset-\(getpid())-\(lossNumber)"
            streamsBefore = daemon.liveStreamCount
            guard let module = benchmark.loadHeadset(name: name, number: lossNumber),
                  let music = benchmark.startMusic(on: name) else { return fail(benchmark.failure ?? "") }
            headsetModule = module
            headsetMusic = music
            waitedTicks = 0
            after(50, waitForHeadsetMusic)
        }

        func waitForHeadsetMusic() {
            waitedTicks += 1
            guard daemon.liveStreamCount > streamsBefore else {
                return waitedTicks > 200 ? fail("the music on the headset never appeared") : after(50, waitForHeadsetMusic)
            }
            // Heard for a second (playing, on the headset), then the headset goes away.
            after(1000) { [unowned self] in
                self.timing?.clearRemovalReactions()
                self.timing?.recording = true
                guard let process = self.benchmark.unloadModule(self.headsetModule) else {
                    return self.fail(self.benchmark.failure ?? "")
                }
                self.unload = process
                self.waitedTicks = 0
                self.after(20, self.waitForLossMute)
            }
        }

        func waitForLossMute() {
            waitedTicks += 1
            if let reaction = timing?.removalReactions.first {
                lossReactions.append(reaction)
            } else if waitedTicks <= 250 {
                return after(20, waitForLossMute)
            } else {
                lossMissed += 1
            }
            timing?.recording = false
            headsetMusic?.signal(SIGTERM)
            _ = unload?.wait(timeout: 5)
            _ = headsetMusic?.wait(timeout: 5)
            // Past the switch window (1 s), so that each round is a loss of its own.
            after(1500, nextOutputLoss)
        }

        static let speech = ["application.name": "speech-dispatcher-espeak-ng",
                             "application.process.binary": "sd_espeak-ng", "media.name": "playback"]

        /// 6 s of digital silence (the screen reader's duck released meanwhile), then 0.8 s of a 1 kHz tone: a phrase after a pause, as a WAV file.
        static func phraseFile() throws -> String {
            let rate = 48000
            let lead = rate * LiveBenchmark.phraseLead / 1000, tone = rate * 8 / 10
            var samples = [Int16](repeating: 0, count: lead + tone)
            for i in 0..<tone {
                samples[lead + i] = Int16(12000 * sin(2 * Double.pi * 1000 * Double(i) / Double(rate)))
            }
            var data = Data()
            func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) } }
            data.append(contentsOf: Array("RIFF".utf8)); append(UInt32(36 + samples.count * 2))
            data.append(contentsOf: Array("WAVEfmt ".utf8)); append(UInt32(16)); append(UInt16(1)); append(UInt16(1))
            append(UInt32(rate)); append(UInt32(rate * 2)); append(UInt16(2)); append(UInt16(16))
            data.append(contentsOf: Array("data".utf8)); append(UInt32(samples.count * 2))
            for sample in samples { append(sample) }
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("audio-policyd-bench-phrase-\(getpid()).wav").path
            try data.write(to: URL(fileURLWithPath: path))
            return path
        }

        static func cpuMicroseconds() -> Int {
            var usage = rusage()
            getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
            return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1_000_000
                + Int(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec)
        }

        func finish() {
            let end = idleEnd
            let phrases = phraseReactions
            benchmark.result = Result(
                server: daemon.connectedServer, streams: benchmark.streamCount, corked: benchmark.corked,
                reaction: Percentiles(promptReactions.map { Double($0.total) }),
                serverAnswer: Percentiles(promptReactions.map { Double($0.server) }),
                daemonShare: Percentiles(promptReactions.map { Double($0.daemon) }),
                idleSeconds: benchmark.idleSeconds,
                // The benchmark's own timer woke the process once to end the idle period.
                idleWakeups: max(0, end.contextSwitches - idleStart.contextSwitches - 1),
                residentKiB: end.residentKiB, peakResidentKiB: end.peakResidentKiB,
                measuredWakeupsPerSecond: measuredWakeups, measuredCPUMillisecondsPerSecond: measuredCPU,
                audibleDaemonShare: Percentiles(phrases.map { Double($0.daemon) }),
                audibleTotal: Percentiles(phrases.map { Double(Int($0.total) - LiveBenchmark.phraseLead * 1000) }),
                outputLoss: Percentiles(lossReactions.map { Double($0) }), outputLossMissed: lossMissed)
            for child in benchmark.children where child.isRunning { child.signal(SIGTERM) }
            daemon.stop()
        }
    }
}
