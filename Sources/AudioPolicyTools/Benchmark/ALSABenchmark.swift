import ALSABackend
import AudioPolicyDaemon
import ControlProtocol
import EventLoop
import FoundationEssentials
import FoundationGaps
import Glibc

/// Measures the daemon in ALSA mode (no sound server): its reaction from a navigation prompt starting
/// to play to the music's gain command, its wake-ups while idle with many streams playing, and its
/// resident memory — of the daemon alone, `audio-policyd-daemon --backend alsa` in a process of its own
/// on private runtime and state folders, as a kiosk or an embedded board runs it.
///
/// The streams speak the plugin's protocol from this process (``PluginClient``): `streams` playing
/// streams on the `mix` PCM (which nothing interrupts, as the live benchmark's generators), one music
/// stream on `primary`, and each prompt on `navigation`. Both ends of a reaction are read here on one
/// monotonic clock: the prompt's STATE running sent → the music's gain command (its RAMP) received. There is no server
/// in between, so all of it is the daemon's, plus two socket hops.
public final class ALSABenchmark {
    public struct Result: Sendable {
        public var streams: Int
        /// Prompt RUNNING sent → the music's first gain command below unity received, µs.
        public var reaction: Percentiles?
        /// The daemon's wake-ups (context switches) per prompt, its duck and its restore included.
        public var wakeupsPerPrompt: Double
        /// Prompts after which no duck came within 2 s.
        public var missed: Int
        public var idleSeconds: Int
        public var idleWakeups: Int
        public var residentKiBAtStart: Int
        public var residentKiBWithStreams: Int
        public var peakResidentKiB: Int
    }

    let streamCount: Int
    let prompts: Int
    let idleSeconds: Int

    public init(streams: Int = 200, prompts: Int = 30, idleSeconds: Int = 10) {
        self.streamCount = streams
        self.prompts = prompts
        self.idleSeconds = idleSeconds
    }

    struct BenchmarkError: Error, CustomStringConvertible {
        var description: String
    }

    public func run() throws -> Result {
        // On tmpfs, as a desktop's $XDG_RUNTIME_DIR is: the journal's log is written there on every decision.
        let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : FileManager.default.temporaryDirectory.path
        let folder = base + "/audio-policyd-bench-alsa-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var environment = ProcessInfo.processInfo.environment
        for (name, sub) in [("XDG_RUNTIME_DIR", "runtime"), ("XDG_STATE_HOME", "state"), ("XDG_CONFIG_HOME", "config")] {
            try FileManager.default.createDirectory(atPath: folder + "/" + sub, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            environment[name] = folder + "/" + sub
        }
        let verbose = ProcessInfo.processInfo.environment["BENCH_LOG"] != nil ? ["--verbose"] : []
        let daemon = try ChildProcess(Self.daemonCommand + ["--backend", "alsa"] + verbose, environment: environment,
                                      log: folder + "/daemon.log")
        defer {
            daemon.signal(SIGTERM)
            if daemon.wait(timeout: 10) == nil { daemon.signal(SIGKILL) }
        }
        let socketPath = folder + "/runtime/audio-policyd/alsa"
        let control = folder + "/runtime/audio-policyd/control"
        try Self.awaitSocket(socketPath, of: daemon, log: folder + "/daemon.log")
        let atStart = ProcessStats.of(pid: daemon.pid)

        var others: [PluginClient] = []
        for _ in 0..<streamCount {
            let stream = try PluginClient(socketPath: socketPath, binary: "bench-streams", classHint: "mix")
            try stream.say(.prepared)
            try stream.say(.running)
            others.append(stream)
        }
        let music = try PluginClient(socketPath: socketPath, binary: "bench-music", classHint: "primary")
        try music.say(.prepared)
        try music.say(.running)
        try awaitStreams(streamCount + 1, control: control)
        music.play(for: 0.5)

        var reactions: [Double] = []
        var missed = 0
        let beforePrompts = ProcessStats.of(pid: daemon.pid)
        for number in 0..<prompts {
            // From a process of its own: a stream of the music's own process would not interrupt it.
            let log = folder + "/prompt-\(number).log"
            let prompt = try ChildProcess(Self.benchCommand + ["bench-streams", "--alsa-prompt", socketPath],
                                          environment: environment, log: log)
            var duck = music.nextGain(within: 2)
            while let gain = duck, gain.gain >= 1 { duck = music.nextGain(within: 2) }
            if let duck, let sent = Self.startTime(in: log, of: prompt) { reactions.append(Double(duck.at) - Double(sent)) } else { missed += 1 }
            prompt.signal(SIGTERM)
            _ = prompt.wait(timeout: 5)
            // Back at unity (the restore is one RAMP the plugin follows) before the next prompt.
            var back = music.nextGain(within: 5)
            while let gain = back, gain.gain < 1 { back = music.nextGain(within: 5) }
            guard back != nil else {
                throw BenchmarkError(description: "the music was not restored within 5 s of a prompt's end; the daemon's log:\n"
                    + Self.tail(of: folder + "/daemon.log"))
            }
        }

        // The last restore's ramp runs on in the plugin after its one RAMP: its end is the prompt's, not idle.
        music.play(for: 1)
        let withStreams = ProcessStats.of(pid: daemon.pid)
        let wakeupsPerPrompt = Double(withStreams.contextSwitches - beforePrompts.contextSwitches) / Double(max(1, prompts))
        music.play(for: Double(idleSeconds))
        let idleEnd = ProcessStats.of(pid: daemon.pid)
        guard daemon.isRunning else { throw BenchmarkError(description: "the daemon exited: see its log above") }
        return Result(streams: streamCount, reaction: Percentiles(reactions), wakeupsPerPrompt: wakeupsPerPrompt,
                      missed: missed, idleSeconds: idleSeconds,
                      idleWakeups: idleEnd.contextSwitches - withStreams.contextSwitches,
                      residentKiBAtStart: atStart.residentKiB, residentKiBWithStreams: idleEnd.residentKiB,
                      peakResidentKiB: idleEnd.peakResidentKiB)
    }

    /// The prompt of one round, in its own process (`bench-streams --alsa-prompt`): a stream on the
    /// `navigation` PCM, set up, then playing; prints the monotonic µs just before its STATE running
    /// went out, then plays until terminated. Returns an exit status.
    public static func playPrompt(socketPath: String) throws -> Int32 {
        let prompt = try PluginClient(socketPath: socketPath, binary: "bench-prompt", classHint: "navigation")
        try prompt.say(.prepared)
        let sent = MainLoop.monotonicMicroseconds()
        try prompt.say(.running)
        StandardStream.output.write("\(sent)\n")
        prompt.play(for: 60)
        return 0
    }

    /// When the prompt in `log` started playing, once it has said so (it prints just after its send;
    /// the duck may arrive first), within a second.
    static func startTime(in log: String, of prompt: ChildProcess) -> UInt64? {
        for _ in 0..<1000 {
            let text = String(decoding: FileManager.default.contents(atPath: log) ?? Data(), as: UTF8.self)
            if let line = text.split(separator: "\n").first, let time = UInt64(line) { return time }
            guard prompt.isRunning else { return nil }
            usleep(1000)
        }
        return nil
    }

    /// This executable (`audio-policyd`), for `bench-streams`.
    static var benchCommand: [String] { [DaemonLaunch.thisExecutable() ?? CommandLine.arguments[0]] }

    /// The daemon alone, `audio-policyd-daemon` beside this executable, else this executable's `run`.
    static var daemonCommand: [String] { DaemonLaunch.daemonBesideThisExecutable().map { [$0] } ?? benchCommand + ["run"] }

    /// The last 40 lines of the daemon's log, for an error.
    static func tail(of log: String) -> String {
        let text = String(decoding: FileManager.default.contents(atPath: log) ?? Data(), as: UTF8.self)
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(40).joined(separator: "\n")
    }

    /// Returns once the daemon's plugin socket takes a connection (it listens once it runs), trying every
    /// 10 ms for 10 s: startup only, nothing measured waits on it.
    static func awaitSocket(_ path: String, of daemon: ChildProcess, log: String) throws {
        for _ in 0..<1000 {
            if let fd = try? PluginClient.connect(to: path) {
                Glibc.close(fd)
                return
            }
            guard daemon.isRunning else {
                throw BenchmarkError(description: "the daemon exited before it listened:\n" + tail(of: log))
            }
            usleep(10_000)
        }
        throw BenchmarkError(description: "the daemon's plugin socket \(path) did not appear within 10 s")
    }

    /// Returns once the daemon's status lists `count` streams (its plugin connections are read in turn
    /// with the control socket: the status request is answered after the HELLOs before it).
    private func awaitStreams(_ count: Int, control: String) throws {
        let client = try ControlClient(path: control)
        for _ in 0..<500 {
            let reply = try client.request(ControlRequest(op: .status))
            if (reply.status?.streams.count ?? 0) >= count { return }
            usleep(10_000)
        }
        throw BenchmarkError(description: "the daemon did not list \(count) streams within 5 s")
    }
}
