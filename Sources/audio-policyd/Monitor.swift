import ArgumentParser
import AudioPolicy
import AudioPolicyDaemon
import ControlProtocol
import FoundationEssentials
import FoundationGaps
import Glibc

/// `audio-policyd monitor`: the daemon's events, live.
struct Monitor: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the daemon's events as they happen: stream states, Now Playing, decisions, players.",
        discussion: """
            Starts with where things stand (every stream, the Now Playing owner, every player), then one line per \
            change. Runs until interrupted, or until the daemon goes away (exit status 1).
            """)

    @OptionGroup var control: SocketOption

    @Flag(name: .long, help: "Print each event as the daemon sends it: one JSON object per line.")
    var json = false

    @Option(name: .long, parsing: .upToNextOption,
            help: ArgumentHelp("Event kinds to show (default: all but input, what the engine is told).", valueName: ControlEvent.Kind.subscribable.map(\.rawValue).joined(separator: "|")))
    var events: [String] = []

    func run() throws {
        let client = try ControlClient(path: control.path)
        let reply = try client.request(ControlRequest(id: .number(1), op: .subscribe,
                                                      events: events.isEmpty ? nil : events.map(ControlEvent.Kind.init)))
        guard reply.ok else { throw ValidationError(reply.error ?? "the daemon refused to subscribe") }
        let decoder = JSONDecoder()
        while true {
            let line: String
            do {
                line = try client.readLine()
            } catch {
                StandardStream.error.write("audio-policyd monitor: the daemon closed the connection\n")
                throw ExitCode.failure
            }
            let text = json ? line : (try? decoder.decode(ControlEvent.self, from: Data(line.utf8))).map(Self.describe) ?? line
            // Unbuffered: a pipe reader sees each event as it happens.
            StandardStream.output.write((text + "\n"))
        }
    }

    static func describe(_ event: ControlEvent) -> String {
        let time = Self.clock()
        switch event.event {
        case .stream:
            guard let stream = event.stream else { break }
            let name = stream.index.map { "stream \($0)" } ?? "hook \(stream.hook ?? "?")"
            let state = stream.state.rawValue + (stream.muted ? " (muted)" : "")
            return "\(time) \(name) \(stream.application) [\(stream.class)\(stream.spoken ? ", spoken" : "")]: \(state)"
        case .nowPlaying:
            guard let owner = event.nowPlaying else { return "\(time) now playing: nobody" }
            var text = "\(time) now playing: \(owner.application)"
            if let pid = owner.pid { text += " (pid \(pid))" }
            if let player = owner.player { text += " through \(player)" }
            if let claim = owner.claim { text += " (claimed: \(claim))" }
            if let status = owner.playbackStatus { text += ": \(status)" }
            return text
        case .decision:
            guard let decision = event.decision else { break }
            return "\(time) stream \(decision.stream) (\(decision.application)) class=\(decision.class) [\(decision.reason)]: \(decision.action)"
        case .player:
            guard let player = event.player else { break }
            let who = "\(player.name)\(player.identity.map { " (\($0))" } ?? "")"
            return player.present ? "\(time) player \(who): \(player.status ?? "status unknown")" : "\(time) player \(who) left"
        case .input:
            guard let input = event.input else { break }
            return "\(time) input: " + input.tomlLines.joined(separator: ", ")
        default:
            break
        }
        return "\(time) \(event.event)"
    }

    private static func clock() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        localtime_r(&seconds, &parts)
        return String(printf: "%02d:%02d:%02d.%03d", parts.tm_hour, parts.tm_min, parts.tm_sec, now.tv_nsec / 1_000_000)
    }
}
