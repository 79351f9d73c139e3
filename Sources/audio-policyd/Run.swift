import ArgumentParser
import AudioPolicy
import AudioPolicyDaemon
import FoundationEssentials
import Glibc

/// `audio-policyd run`: the daemon, in the foreground.
struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the daemon in the foreground: apply the policy to every playback stream, live.",
        discussion: """
            Connects to the session's sound server (PulseAudio, or PipeWire through pipewire-pulse; \
            PULSE_SERVER is honoured) and reconnects if it goes away. SIGHUP reloads the policy (a bad \
            one is reported and the old one stays); SIGTERM/SIGINT restore every stream, then exit.
            Policy: --policy, else $XDG_CONFIG_HOME/audio-policyd/policy.toml, else \
            /etc/audio-policyd/policy.toml, else the embedded default.
            """)

    @Option(name: .long, help: "Policy file (default: see below).")
    var policy: String?

    @OptionGroup var control: SocketOption

    @Flag(name: .shortAndLong, help: "Log every stream and event, not only decisions.")
    var verbose = false

    func run() throws {
        let path = PolicyFile.configuredPath(explicit: policy)
        let loaded: Policy
        do {
            loaded = try PolicyFile.load(path: path)
        } catch {
            printErrors(error)
            throw ExitCode.failure
        }
        var options = DaemonOptions(policy: loaded, policyPath: path,
                                    socketPath: control.path, verbose: verbose)
        // The log on tmpfs when the session has a runtime folder, made durable in the state folder.
        if let log = JournalStore.defaultLogPath() {
            options.journalPath = log
            options.journalDurableCopy = JournalStore.defaultPath()
        } else {
            options.journalPath = JournalStore.defaultPath()
        }
        let daemon = Daemon(options: options) { path in try PolicyFile.load(path: path) }
        let code = try daemon.run()
        if code != 0 { throw ExitCode(code) }
    }
}

extension PolicyFile {
    /// The policy file in force: the explicit one, else the user's, else the system's, else none
    /// (the embedded default).
    static func configuredPath(explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> String? {
        if let explicit { return explicit }
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"].map { $0 + "/.config" } ?? "")
        for candidate in [config + "/audio-policyd/policy.toml", "/etc/audio-policyd/policy.toml"]
            where FileManager.default.fileExists(atPath: candidate) {
            return candidate
        }
        return nil
    }
}
