import ArgumentParser
import AudioPolicyDaemon
import ControlProtocol
import FoundationEssentials
import FoundationGaps
import Glibc
import Synchronization

/// `audio-policyd interrupt --class short -- COMMAND...`: an interruption for as long as a command runs.
struct Interrupt: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a command as an interruption: other apps duck (or pause) while it runs.",
        discussion: """
            The interruption begins before the command starts and ends when it exits, or is killed: the daemon \
            ends the interruption of a connection that closes, so even `kill -9` of this process leaves no duck \
            behind. Exits with the command's status (128+N if signal N killed it). SIGTERM, SIGINT and SIGHUP are \
            passed on to the command.
            The command's own streams get `media.role` ROLE (through PULSE_PROP), so that a text-to-speech \
            engine's voice is classified with the interruption rather than as music.
            Without a command, the interruption lasts until this process is terminated (or, when its standard \
            output is a pipe, until the pipe's reader is gone: a player that runs it as a subprocess and quits).
            If the daemon cannot be reached, the command still runs (with a warning); if it refuses (an \
            unknown class), nothing runs and the exit status is 64.
            With --wait-for-call, the interruption (and the command) begins only once no call is on, as \
            Android's delayed audio focus: a reminder or a spoken line waits for the call to end rather than \
            talk over it. --timeout bounds the wait: past it, nothing runs and the exit status is 75.
            Example: audio-policyd interrupt --class short --app espeak -- espeak-ng "Turn left"
            Example: audio-policyd interrupt --class short --wait-for-call --timeout 600 -- spd-say -w "Time to go"
            """)

    @Option(name: .customLong("class"), help: "The interruption's class, as the policy defines it.")
    var className = "short"

    @Option(help: "The application name the daemon shows (default: the command's name).")
    var app: String?

    @Option(name: [.customShort("p"), .long],
            help: ArgumentHelp("A property of the interruption, such as media.role=assistant. Repeatable.",
                               valueName: "key=value"))
    var property: [String] = []

    @Option(help: ArgumentHelp("media.role for the command's own streams; `none` to leave them alone (default: one the default policy puts in the class).",
                               valueName: "role"))
    var role: String?

    @Flag(name: .customLong("wait-for-call"),
          help: "Begin only once no call is on: while a call plays, wait for it to end, then run the command.")
    var waitForCall = false

    @Option(help: ArgumentHelp("With --wait-for-call: give up after waiting this long (exit 75, nothing run); default: as long as the call lasts.",
                               valueName: "seconds"))
    var timeout: Double?

    @OptionGroup var control: SocketOption

    @Argument(parsing: .postTerminator, help: "The command to run, after `--`.")
    var command: [String] = []

    func validate() throws {
        for assignment in property where !assignment.contains("=") || assignment.hasPrefix("=") {
            throw ValidationError("--property must be KEY=VALUE, got \"\(assignment)\"")
        }
        if let timeout {
            guard waitForCall else { throw ValidationError("--timeout goes with --wait-for-call") }
            guard timeout > 0, timeout.isFinite else { throw ValidationError("--timeout must be a number of seconds above 0") }
        }
    }

    /// Roles the default policy puts in its classes, for the command's own streams.
    static let defaultRoles = ["short": "assistant", "navigation": "navigation", "notification": "event",
                               "call": "phone", "mix": "production"]

    func run() throws {
        let arguments = command.first == "--" ? Array(command.dropFirst()) : command
        let connection = try begin(name: app ?? arguments.first.map { $0.pathLastComponent } ?? "interrupt")
        let code: Int32
        if arguments.isEmpty {
            code = Self.waitForEnd()
        } else {
            code = try Self.runCommand(arguments, role: role == "none" ? nil : role ?? Self.defaultRoles[className])
        }
        if let (client, token) = connection {
            _ = try? client.request(ControlRequest(id: .number(2), op: .end, token: token))
        }
        if code != 0 { throw ExitCode(code) }
    }

    /// Begins the interruption; nil (after a warning) when the daemon cannot be reached, so that the
    /// command runs anyway. Throws when the daemon refuses (an unknown class): that is a mistake to fix.
    private struct Refused: Error {
        var reason: String
    }

    private func begin(name: String) throws -> (ControlClient, String)? {
        var properties: [String: String] = [:]
        for assignment in property {
            guard let equals = assignment.firstIndex(of: "=") else { continue }
            properties[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
        }
        do {
            let client = try ControlClient(path: control.path)
            let reply = try client.request(ControlRequest(id: .number(1), op: .begin, class: className, app: name,
                                                          properties: properties.isEmpty ? nil : properties,
                                                          waitForCall: waitForCall ? true : nil))
            guard reply.ok, let token = reply.token else {
                throw Refused(reason: reply.error ?? "no reason given")
            }
            if reply.delayed == true {
                Self.warn("a call is on: waiting for it to end")
                guard try Self.awaitBegan(token, on: client, timeout: timeout) else {
                    Self.warn("the call went on past --timeout \(timeout ?? 0) s; nothing was run")
                    throw ExitCode(75)
                }
            }
            return (client, token)
        } catch let refused as Refused {
            Self.warn("the daemon refused the interruption: \(refused.reason)")
            throw ExitCode(64)
        } catch let exit as ExitCode {
            throw exit
        } catch {
            Self.warn("\(error); running the command without an interruption")
            return nil
        }
    }

    /// Waits for the daemon's `began` line for `token` (the call is over); false when `timeout` seconds
    /// pass first. Closing the connection after that withdraws the request.
    private static func awaitBegan(_ token: String, on client: ControlClient, timeout: Double?) throws -> Bool {
        let deadline = timeout.map { Self.monotonicSeconds() + $0 }
        while true {
            while let line = client.nextBufferedLine() {
                if let event = try? JSONDecoder().decode(ControlEvent.self, from: Data(line.utf8)),
                   event.event == .began, event.token == token {
                    return true
                }
            }
            let remaining = deadline.map { max(0, $0 - Self.monotonicSeconds()) }
            if remaining == 0 { return false }
            var watched = pollfd(fd: client.socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&watched, 1, remaining.map { Int32(min($0 * 1000, Double(Int32.max)).rounded(.up)) } ?? -1)
            if ready < 0, errno == EINTR { continue }
            if ready > 0 { try client.receive() }
        }
    }

    private static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    private static func warn(_ text: String) {
        StandardStream.error.write("audio-policyd interrupt: \(text)\n")
    }

    // MARK: - The command

    /// The running command, for the signal handlers to pass signals on to.
    private static let child = Atomic<Int32>(0)

    private static func runCommand(_ arguments: [String], role: String?) throws -> Int32 {
        var environment = ProcessInfo.processInfo.environment
        if let role {
            let declared = "media.role=\"\(role)\""
            environment["PULSE_PROP"] = environment["PULSE_PROP"].map { "\($0) \(declared)" } ?? declared
        }
        for signal in [SIGTERM, SIGINT, SIGHUP] {
            Glibc.signal(signal) { number in
                let pid = Interrupt.child.load(ordering: .relaxed)
                if pid > 0 { kill(pid, number) }
            }
        }
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        let spawned = posix_spawnp(&pid, arguments[0], nil, nil, argv, envp)
        guard spawned == 0 else {
            warn("cannot run \(arguments[0]): \(String(cString: strerror(spawned)))")
            return 127
        }
        child.store(pid, ordering: .relaxed)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return 127 }
        }
        child.store(0, ordering: .relaxed)
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Holds the interruption until SIGTERM, SIGINT or SIGHUP — or, when standard output is a pipe,
    /// until whoever reads it is gone (a player that started us as a subprocess and quit). Exits 0.
    private static func waitForEnd() -> Int32 {
        // The self-pipe trick: the handlers write a byte that poll() sees; no signal is missed
        // between checking and waiting.
        var wake: [Int32] = [0, 0]
        guard pipe(&wake) == 0 else { return 1 }
        wakeUp.store(wake[1], ordering: .relaxed)
        for signal in [SIGTERM, SIGINT, SIGHUP] {
            Glibc.signal(signal) { _ in
                var byte: UInt8 = 1
                _ = write(Interrupt.wakeUp.load(ordering: .relaxed), &byte, 1)
            }
        }
        var status = stat()
        let watchOutput = fstat(STDOUT_FILENO, &status) == 0 && (status.st_mode & S_IFMT) == S_IFIFO
        // A pipe's write end reports POLLERR once its read end is closed; nothing needs to be written.
        var fds = [pollfd(fd: wake[0], events: Int16(POLLIN), revents: 0),
                   pollfd(fd: STDOUT_FILENO, events: 0, revents: 0)]
        while true {
            let ready = poll(&fds, watchOutput ? 2 : 1, -1)
            if ready < 0, errno == EINTR { continue }
            if ready < 0 || fds[0].revents != 0 { return 0 }
            if fds[1].revents & Int16(POLLERR | POLLHUP) != 0 { return 0 }
        }
    }

    /// The write end of the pipe that wakes ``waitForEnd()``.
    private static let wakeUp = Atomic<Int32>(-1)
}
