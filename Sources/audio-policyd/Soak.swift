import ArgumentParser
import AudioPolicyDaemon
import AudioPolicyTools
import FoundationEssentials
import FoundationGaps
import Glibc

/// `audio-policyd soak`: minutes of churn on the real sound server, with the daemon's promise checked
/// at quiet moments (see ``SoakRun``). It starts the daemon itself, kills it, restarts the server with
/// the given command, and exits 1 on any violation.
struct Soak: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Churn streams on the real sound server for a while, killing the daemon and restarting the server, and check that nothing is left quiet, muted or changed.",
        discussion: """
            Starts `audio-policyd run` itself (from this executable, or --daemon) with folders of its own. \
            Streams of every class (music, another app's music, no role, navigation, notification, phone, \
            speech-dispatcher) start and end at --rate from real libpulse clients, some created corked, some \
            quitting abruptly while ducked or muted; the user changes volumes and mutes through a mixer \
            connection of its own; Bluetooth-like headsets come, get streams, and go (lost, profile switch, left empty), \
            and after a loss the user turns each stream that was on it up or down. At checkpoints everything that interrupts ends, and once the daemon has \
            undone everything, every surviving stream must be at the user's exact volume and mute, and every \
            saved stream-restore entry of the soak's keys at a level the user had. Durations: 90, 90s, 10m, 1h.
            """)

    @Option(help: "How long to churn.")
    var duration = "10m"

    @Option(help: "Seed for the churn (default: random; printed).")
    var seed: UInt64?

    @Option(help: "Streams started per minute.")
    var rate = 300.0

    @Option(help: "User volume and mute changes per minute.")
    var userChanges = 60.0

    @Flag(help: "The user changes only streams whose level has been still for 1.2 s (leaves out the known race of a change overwritten by the daemon's next ramp step).")
    var usersAvoidRamps = false

    @Option(help: "Most apps (client connections) alive at once (PulseAudio takes 64 clients).")
    var maxApps = 30

    @Option(help: "Time between checkpoints (about).")
    var checkpointEvery = "30s"

    @Option(help: "Shell command that restarts the sound server, e.g. 'scripts/sound-server restart DIR' (default: no restarts).")
    var restartServer: String?

    @Option(help: "Time between server restarts (about).")
    var restartEvery = "90s"

    @Option(help: "Time between headsets that come and go (about; 0: none): the user moves streams onto one, then it is lost, switches profile, or is left empty.")
    var outputEvery = "40s"

    @Option(help: "Time between daemon kills with SIGKILL (about; 0: none).")
    var killEvery = "60s"

    @Option(help: "Longest a checkpoint waits for the daemon to undo everything.")
    var settleTimeout = "15s"

    @Option(help: "The daemon executable (default: this one).")
    var daemon: String?

    @Option(help: "Policy file for the daemon (default: its own choice).")
    var policy: String?

    @Option(help: "Folder for the daemon's runtime and state folders and logs (default: a new temporary one, removed after a clean run).")
    var folder: String?

    @Option(help: ArgumentHelp("A fault made on purpose, to prove the checker fails.", visibility: .hidden))
    var injectFault: String?

    func run() throws {
        guard ProcessInfo.processInfo.environment["PULSE_SERVER"] != nil || FileManager.default.fileExists(
            atPath: (ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] ?? "/nonexistent") + "/pulse/native") else {
            throw ValidationError("no sound server: set PULSE_SERVER (e.g. eval \"$(scripts/sound-server start pulseaudio DIR)\")")
        }
        let executable = daemon ?? DaemonLaunch.thisExecutable() ?? CommandLine.arguments[0]
        let workFolder = folder ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("audio-policyd-soak-\(getpid())").path
        var plan = SoakPlan(daemonExecutable: executable, folder: workFolder)
        plan.duration = try Self.seconds(duration, "--duration")
        plan.seed = seed ?? UInt64.random(in: 1...UInt64(UInt32.max))
        plan.ratePerMinute = rate
        plan.userChangesPerMinute = userChanges
        plan.usersAvoidRamps = usersAvoidRamps
        plan.maxApps = maxApps
        plan.checkpointInterval = try Self.seconds(checkpointEvery, "--checkpoint-every")
        plan.restartServerCommand = restartServer
        plan.restartInterval = try Self.seconds(restartEvery, "--restart-every")
        plan.killInterval = try Self.seconds(killEvery, "--kill-every")
        plan.outputInterval = try Self.seconds(outputEvery, "--output-every")
        plan.settleTimeout = try Self.seconds(settleTimeout, "--settle-timeout")
        plan.policy = policy
        if let injectFault {
            guard let fault = SoakFault(rawValue: injectFault) else {
                throw ValidationError("--inject-fault: one of \(SoakFault.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            plan.fault = fault
        }
        Self.say("soak: seed \(plan.seed), \(Int(plan.duration)) s, \(Int(rate)) streams/min, daemon \(executable), folder \(workFolder)"
            + (restartServer == nil ? ", no server restarts" : ""))
        let report = try SoakRun(plan: plan, say: Self.say).run()
        Self.say(report.summary)
        if report.violations.isEmpty {
            if folder == nil { try? FileManager.default.removeItem(atPath: workFolder) }
        } else {
            Self.say("daemon logs: \(workFolder)")
            throw ExitCode.failure
        }
    }

    /// One line on standard output at once (unbuffered: progress of a long run, also when piped).
    static func say(_ line: String) {
        StandardStream.output.write((line + "\n"))
    }

    /// Seconds in `text`: `90`, `90s`, `10m`, `1h`, `1.5m`.
    static func seconds(_ text: String, _ option: String) throws -> Double {
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            if let value = Double(text.dropLast(suffix.count)), value >= 0 { return value * scale }
        }
        if let value = Double(text), value >= 0 { return value }
        throw ValidationError("\(option) \(text): expected a duration such as 90, 90s, 10m or 1h")
    }
}
