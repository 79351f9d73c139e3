import ArgumentParser
import AudioPolicy
import AudioPolicyDaemon
import ControlProtocol
import EventLoop
import FoundationEssentials
import FoundationGaps
import Glibc

/// `audio-policyd record`: the live session as a fixture, to replay with `test` or attach to a bug report.
struct Record: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Record what the running daemon sees and does as a fixture that `test` replays.",
        discussion: """
            Writes every event the daemon's engine is told (streams with their real properties, corked and \
            uncorked, audible and silent, the user's volume and mute, players, hooks) as [[event]] tables, and \
            what the daemon did (each stream's state after each decision, the factor its ramp settles at, the \
            Now Playing owner) as [[expect]] tables, with `at` from the start of the recording. Streams already \
            playing open the file as starting at 0. Ends after --duration, on Ctrl-C or SIGTERM (the file is \
            complete either way), or when the daemon goes away (exit status 1, the file still written).
            """)

    @OptionGroup var control: SocketOption

    @Option(name: .long, help: "Stop after this many seconds (default: until Ctrl-C).")
    var duration: Double?

    @Option(name: .shortAndLong, help: "Write the fixture here (default: standard output).")
    var output: String?

    @Flag(name: .long, help: "Keep titles (media.name, song and tab titles) and user/host names in properties.")
    var withTitles = false

    func validate() throws {
        if let duration, !(duration > 0) { throw ValidationError("--duration must be a positive number of seconds") }
    }

    func run() throws {
        let client = try ControlClient(path: control.path)
        let status = try client.request(ControlRequest(id: .number(1), op: .status))
        let policy = status.status?.policy
        let reply = try client.request(ControlRequest(id: .number(2), op: .subscribe,
                                                      events: [.input, .stream, .nowPlaying]))
        guard reply.ok else { throw ValidationError(reply.error ?? "the daemon refused to subscribe") }

        // Event-driven: the socket, the signals and the duration's one timer on a main loop.
        let loop = MainLoop()
        var recording = FixtureRecording(withTitles: withTitles)
        let started = Date()
        let decoder = JSONDecoder()
        func drain() {
            while let line = client.nextBufferedLine() {
                guard let event = try? decoder.decode(ControlEvent.self, from: Data(line.utf8)) else { continue }
                Self.add(event, to: &recording)
            }
        }
        drain()
        let signals = try MainLoop.SignalHandler(loop: loop, signals: [SIGINT, SIGTERM]) { _ in loop.quit(0) }
        let watch = MainLoop.IOWatch(loop: loop, fd: client.socket, events: .readable) { _ in
            do {
                try client.receive()
                drain()
            } catch {
                loop.quit(1)
            }
        }
        StandardStream.error.write("audio-policyd record: recording; Ctrl-C ends it\n")
        let timer = MainLoop.Timer(loop: loop) { loop.quit(0) }
        if let duration { timer.schedule(after: UInt64(duration * 1_000_000)) }
        let code = loop.run()
        withExtendedLifetime((signals, watch, timer)) {}
        let daemonLeft = code != 0

        let seconds = Date().timeIntervalSince(started)
        let description = "Recorded by audio-policyd record: \(recording.eventCount) events over "
            + String(printf: "%.1f", seconds) + " s"
        let text = recording.text(description: description,
                                  policy: policy.flatMap { $0.hasPrefix("/") ? $0 : nil })
        if let output {
            let temporary = output + ".partial"
            try text.write(toFile: temporary, atomically: false, encoding: .utf8)
            guard rename(temporary, output) == 0 else { throw ValidationError("cannot write \(output): \(String(cString: strerror(errno)))") }
            StandardStream.error.write("audio-policyd record: \(recording.eventCount) events in \(output)\n")
        } else {
            StandardStream.output.write(text)
        }
        if daemonLeft {
            StandardStream.error.write("audio-policyd record: the daemon closed the connection\n")
            throw ExitCode.failure
        }
    }

    static func add(_ event: ControlEvent, to recording: inout FixtureRecording) {
        guard let at = event.at else { return }
        switch event.event {
        case .input:
            if let input = event.input { recording.input(input, at: at) }
        case .stream:
            // Hooks' interruptions have no state a fixture can expect (`test` knows streams only).
            guard let stream = event.stream, stream.hook == nil, let index = stream.index else { return }
            recording.stream(String(index), state: stream.state, muted: stream.muted, target: stream.target,
                             settles: stream.settles, at: at)
        case .nowPlaying:
            recording.nowPlaying(event.nowPlaying?.stream, at: at)
        default:
            break
        }
    }
}
