import ArgumentParser
import AudioPolicyTools

/// `audio-policyd bench-streams`: the streams `bench` keeps alive, played from a process of their own
/// (hidden; `bench` starts it).
struct BenchStreams: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-streams",
        abstract: "Play COUNT streams of silence from one connection until killed (for bench).",
        shouldDisplay: false)

    @Option(help: "How many streams.")
    var count = 200

    @Flag(help: "Hold the streams corked (paused) instead of playing.")
    var corked = false

    @Flag(help: "Play a tone instead of silence (the benchmark's music, which a meter must hear).")
    var tone = false

    @Option(name: .customLong("property"), help: "KEY=VALUE on every stream; repeatable.")
    var properties: [String] = []

    @Option(name: .customLong("sink"), help: "A sink to play to, the streams taking turns; repeatable (default: the server's default sink).")
    var sinks: [String] = []

    @Option(help: "Instead: one ALSA prompt on the daemon's plugin socket at PATH (bench in ALSA mode); prints when it started playing.")
    var alsaPrompt: String?

    func run() throws {
        if let alsaPrompt { throw ExitCode(try ALSABenchmark.playPrompt(socketPath: alsaPrompt)) }
        var list: [String: String] = [:]
        for property in properties {
            guard let equals = property.firstIndex(of: "=") else {
                throw ValidationError("--property \(property): expected KEY=VALUE")
            }
            list[String(property[..<equals])] = String(property[property.index(after: equals)...])
        }
        throw ExitCode(StreamGenerator(count: count, corked: corked, tone: tone, properties: list, sinks: sinks).run())
    }
}
