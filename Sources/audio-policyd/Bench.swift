import ArgumentParser
import AudioPolicy
import AudioPolicyDaemon
import AudioPolicyTools
import Dispatch
import FoundationEssentials
import FoundationGaps
import Glibc

/// `audio-policyd bench`: the figures docs/benchmarks.md quotes.
struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure decision time, fixture throughput, and (with a sound server) reaction time, idle wake-ups and memory.")

    @Option(help: "Streams alive while measuring.")
    var streams = 200

    @Flag(help: "Hold the other streams corked (paused, as a paused player holds its stream) instead of playing silence.")
    var corked = false

    @Option(help: "Navigation prompts to time on the live server.")
    var prompts = 30

    @Option(help: "Headsets to unload on the live server (output loss: the removal event -> the mute request).")
    var outputLosses = 30

    @Option(help: "Seconds to count idle wake-ups.")
    var idleSeconds = 10

    @Option(help: "Fixture folder for the throughput figure.")
    var fixtures = "Tests/Fixtures"

    @Flag(help: "Skip the live part even when a sound server is reachable.")
    var noLive = false

    @Option(help: "Live part on: pulse (the sound server in PULSE_SERVER), alsa (a daemon of its own in ALSA mode, its streams speaking the plugin's protocol), or auto (default: pulse when a server answers, else alsa).")
    var backend: BackendChoice = .auto

    func run() throws {
        print("engine decision, \(streams) streams alive (µs): \(EngineBenchmark.decisionTimes(streams: streams))")
        print("engine decision, a prompt among \(streams) streams that ducks one (µs): "
            + "\(EngineBenchmark.decisionTimes(streams: streams, background: true))")
        let sandbox = SandboxBenchmark.scanTimes()
        print("sandbox check of a stream whose process runs another binary (µs): \(sandbox.times); "
            + "\(sandbox.read) of \(sandbox.processes) processes read (those in another pid namespace)")
        if FileManager.default.fileExists(atPath: fixtures) {
            let (count, seconds) = try fixtureThroughput()
            print(String(printf: "fixtures: %d replays in %.1f ms (%.0f fixtures/s)", count, seconds * 1000,
                         Double(count) / seconds))
        }
        guard !noLive else { return }
        if backend.resolved() == .alsa { return try runALSA() }
        let result = try LiveBenchmark(streams: streams, corked: corked, prompts: prompts, idleSeconds: idleSeconds,
                                    outputLosses: outputLosses).run()
        print("live on \(result.server ?? "?"): \(result.streams) streams \(result.corked ? "alive, corked" : "playing")")
        print("  reaction, server announces prompt -> duck requests sent (µs): "
            + (result.reaction.map { "\($0); within 2 ms: \(Int(($0.share(atMost: 2000) * 100).rounded(.down)))%" }
                ?? "no samples"))
        print("    of which the server answering for the new stream (µs): "
            + (result.serverAnswer.map(String.init(describing:)) ?? "no samples"))
        print("    of which the daemon, answer in hand -> requests sent (µs): "
            + (result.daemonShare.map(String.init(describing:)) ?? "no samples"))
        print("  idle wake-ups with \(result.streams) streams \(result.corked ? "alive" : "playing"): \(result.idleWakeups) in \(result.idleSeconds) s")
        print(String(printf: "  a silent screen-reader stream open next to the music (measured): %.1f wake-ups/s, %.2f ms CPU/s",
                     result.measuredWakeupsPerSecond, result.measuredCPUMillisecondsPerSecond))
        print("  a phrase after silence in an open stream, first loud peak -> duck requests (µs): "
            + (result.audibleDaemonShare.map(String.init(describing:)) ?? "no samples"))
        print("    from the phrase's first sound due -> duck requests (µs, estimate): "
            + (result.audibleTotal.map(String.init(describing:)) ?? "no samples"))
        print("  output loss, the server's SINK REMOVE event received -> the mute request sent (µs): "
            + (result.outputLoss.map(String.init(describing:)) ?? "no samples")
            + (result.outputLossMissed > 0 ? "; \(result.outputLossMissed) unloads without a mute in 5 s" : ""))
        print("  memory: \(result.residentKiB / 1024) MiB resident, \(result.peakResidentKiB / 1024) MiB peak")
    }

    /// The live part in ALSA mode: the daemon alone, in a process of its own.
    private func runALSA() throws {
        let result = try ALSABenchmark(streams: streams, prompts: prompts, idleSeconds: idleSeconds).run()
        print("live in ALSA mode (audio-policyd-daemon --backend alsa): \(result.streams) streams playing")
        print("  reaction, prompt STATE running sent -> the music's RAMP received (µs): "
            + (result.reaction.map { "\($0); within 2 ms: \(Int(($0.share(atMost: 2000) * 100).rounded(.down)))%" }
                ?? "no samples") + (result.missed > 0 ? "; \(result.missed) prompts without a duck in 2 s" : ""))
        print(String(printf: "  the daemon's wake-ups per prompt (its connection, the duck, its end, the restore): %.1f",
                     result.wakeupsPerPrompt))
        print("  idle wake-ups with \(result.streams) streams playing: \(result.idleWakeups) in \(result.idleSeconds) s")
        print(String(printf: "  memory of the daemon: %.1f MiB resident at start, %.1f MiB with the streams, %.1f MiB peak",
                     Double(result.residentKiBAtStart) / 1024, Double(result.residentKiBWithStreams) / 1024,
                     Double(result.peakResidentKiB) / 1024))
    }

    /// Replays every fixture (at least 1000 replays, cycling) and returns the count and seconds.
    private func fixtureThroughput() throws -> (Int, Double) {
        var policies = PolicyCache(override: nil)
        var loaded: [(Fixture, Policy, FixtureRunner)] = []
        for path in try FixtureFiles.expand([fixtures]) {
            if case let .success(fixture) = Result(catching: { try FixtureLoader.load(text: try PolicyFile.readText(path), file: path) }),
               case let .success(policy) = Result(catching: { try policies.policy(for: fixture) }),
               case let .success(reloads) = Result(catching: { try policies.reloads(for: fixture) }) {
                loaded.append((fixture, policy, FixtureRunner(reloads: reloads)))
            }
        }
        guard !loaded.isEmpty else { return (0, 1) }
        let count = max(1000, loaded.count)
        let start = DispatchTime.now().uptimeNanoseconds
        var failures = 0
        for i in 0..<count {
            let (fixture, policy, runner) = loaded[i % loaded.count]
            failures += runner.run(fixture, policy: policy).failures.count
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        if failures > 0 { print("  (note: \(failures) expectations failed while timing)") }
        return (count, seconds)
    }
}

/// The pure engine's decision time for a navigation prompt with many streams alive.
enum EngineBenchmark {
    /// With `background`, the streams are of a class nothing interrupts (as in the live benchmark)
    /// and one music stream is ducked; else all of them are music of one app, all ducked at once.
    static func decisionTimes(streams: Int, background: Bool = false, rounds: Int = 2000) -> Percentiles {
        var engine = Engine(policy: background ? LiveBenchmark.policy : .embeddedDefault)
        var now = 0
        for i in 0..<streams {
            let properties = background ? ["media.role": "abstract", "application.process.id": "41"]
                : ["media.role": "music", "application.process.id": "42"]
            _ = engine.handle(.streamStarted(StreamID("m\(i)"), properties, player: nil), at: now)
        }
        if background {
            _ = engine.handle(.streamStarted(StreamID("music"), ["media.role": "music", "application.process.id": "42"],
                                             player: nil), at: now)
        }
        now += 10000
        _ = engine.handle(.tick, at: now)
        var samples: [Double] = []
        samples.reserveCapacity(rounds)
        for round in 0..<rounds {
            let id = StreamID("nav\(round)")
            let start = DispatchTime.now().uptimeNanoseconds
            _ = engine.handle(.streamStarted(id, ["media.role": "navigation"], player: nil), at: now)
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1000)
            _ = engine.handle(.streamEnded(id), at: now + 100)
            now += 5000
            _ = engine.handle(.tick, at: now)
        }
        return Percentiles(samples)!
    }
}
