import AudioPolicyDaemon
import FoundationGaps
import Glibc

// audio-policyd-daemon: the daemon alone, what the systemd unit and `audio-policyd run` start. It
// takes `run`'s options, parsed by hand: no argument parser and none of `audio-policyd`'s other
// commands (bench, soak, top, …) are linked in, so the running daemon maps less (docs/benchmarks.md, memory).

let name = DaemonLaunch.executableName
let request: DaemonLaunch.Arguments.Request
do {
    request = try DaemonLaunch.Arguments.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    StandardStream.error.write("\(name): \(error)\n\(DaemonLaunch.Arguments.usage)\n  See '\(name) --help'.\n")
    exit(DaemonLaunch.Arguments.UsageError.exitCode)
}
switch request {
case .help:
    StandardStream.output.write(DaemonLaunch.Arguments.help)
case .version:
    StandardStream.output.write(DaemonLaunch.version + "\n")
case let .run(arguments):
    do {
        exit(try DaemonLaunch.run(policy: arguments.policy, socket: arguments.socket, verbose: arguments.verbose,
                                  backend: arguments.backend, nowPlaying: arguments.nowPlaying))
    } catch {
        // As `audio-policyd run` reports a failure to start (its argument parser's "Error: …").
        StandardStream.error.write("Error: \(error)\n")
        exit(1)
    }
}
