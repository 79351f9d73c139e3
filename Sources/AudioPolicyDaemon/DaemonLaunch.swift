import AudioPolicy
import ControlProtocol
import FoundationEssentials
import FoundationGaps
import Glibc
import SessionBus

/// Starting the daemon from a command line. Two executables do it and take the same options:
/// `audio-policyd-daemon`, the daemon alone (what the service runs: no command-line tools are linked
/// into it, so it maps less; docs/benchmarks.md, memory), and `audio-policyd run`, which hands over to it when it
/// sits next to `audio-policyd` and runs the daemon in its own process otherwise.
public enum DaemonLaunch {
    /// The version both executables report.
    public static let version = "0.1.0"
    /// The daemon-only executable, installed next to `audio-policyd`.
    public static let executableName = "audio-policyd-daemon"

    /// This process's executable (`/proc/self/exe`): what `run` hands over from, and what the benchmark
    /// and the soak start again as helpers.
    public static func thisExecutable() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// ``executableName`` in this executable's folder, if it is there and may be run (as `make install`,
    /// `scripts/run` and `swift build` put it).
    public static func daemonBesideThisExecutable() -> String? {
        guard let me = thisExecutable() else { return nil }
        let daemon = me.pathFolder + "/" + executableName
        return access(daemon, X_OK) == 0 ? daemon : nil
    }

    /// What the daemon does, for both executables' help.
    public static let abstract = "Run the daemon in the foreground: apply the policy to every playback stream, live."
    public static let discussion = """
        Connects to the session's sound server (PulseAudio, or PipeWire through pipewire-pulse; \
        PULSE_SERVER is honoured) and reconnects if it goes away; with no sound server (or --backend \
        alsa), serves the ALSA plugin's socket ($XDG_RUNTIME_DIR/audio-policyd/alsa, else \
        /run/audio-policyd/alsa) instead: see `audio-policyd alsa-config`. SIGHUP reloads the policy (a bad \
        one is reported and the old one stays); SIGTERM/SIGINT restore every stream, then exit.
        Policy: --policy FILE alone, else $XDG_CONFIG_HOME/audio-policyd/policy.toml, else \
        /etc/audio-policyd/policy.toml, else the embedded default, then the drop-ins: every *.toml of \
        /etc/audio-policyd/policy.d and $XDG_CONFIG_HOME/audio-policyd/policy.d, in file name order \
        (docs/policy.md).
        """
    /// Each option's help, for both executables.
    public static let policyHelp = "Policy file (default: see below)."
    public static let socketHelp = "Control socket path (default: $XDG_RUNTIME_DIR/audio-policyd/control)."
    public static let verboseHelp = "Log every stream and event, not only decisions."
    public static let nowPlayingHelp = "Where the Now Playing player is published on the session bus: own "
        + "(org.audiopolicyd.NowPlaying: no second media card in GNOME, KDE or swaync), mpris "
        + "(org.mpris.MediaPlayer2.audiopolicy, for playerctl -p audiopolicy) or none (default: own)."

    /// Loads the configured policy (``PolicyFile/configuredPath(explicit:environment:)``), chooses the
    /// journal's files and runs the daemon until SIGTERM/SIGINT. A policy that does not load is written
    /// on standard error as `FILE:LINE:COLUMN: message` lines, and the daemon does not start.
    /// - Parameter socket: the control socket; nil: ``ControlSocketPath/default(environment:)``.
    /// - Returns: the exit code: the daemon's, or 1 for a policy that does not load.
    /// - Parameter backend: the sound system to act on; `auto` is resolved here, once.
    public static func run(policy explicit: String?, socket: String?, verbose: Bool,
                           backend: BackendChoice = .auto, nowPlaying: NowPlayingName = .own) throws -> Int32 {
        let layers = PolicyFile.inForce(explicit: explicit)
        let loaded: Policy
        do {
            loaded = try PolicyFile.load(layers)
        } catch {
            printErrors(error)
            return 1
        }
        var options = DaemonOptions(policy: loaded, policyPath: layers.base,
                                    socketPath: socket ?? ControlSocketPath.default(), verbose: verbose)
        options.nowPlaying = nowPlaying
        // The log on tmpfs when the session has a runtime folder, made durable in the state folder.
        if let log = JournalStore.defaultLogPath() {
            options.journalPath = log
            options.journalDurableCopy = JournalStore.defaultPath()
        } else {
            options.journalPath = JournalStore.defaultPath()
        }
        let resolved = backend.resolved()
        if backend == .auto {
            StandardStream.error.write("audio-policyd: backend auto: \(resolved == .pulse ? "a sound server answers" : "no sound server answers, ALSA plugins") (\(resolved.rawValue))\n")
        }
        // SIGHUP looks for the files anew: a policy.toml or drop-in added since is read too.
        let daemon = Daemon(options: options, loadPolicy: { () throws(LocatedErrors) in
                                try PolicyFile.load(PolicyFile.inForce(explicit: explicit))
                            },
                            server: resolved.connection())
        return try daemon.run()
    }

    // MARK: - The daemon-only executable's command line

    /// What `audio-policyd-daemon` was asked for: `audio-policyd run`'s options.
    public struct Arguments: Equatable, Sendable {
        public var policy: String?
        public var socket: String?
        public var verbose = false
        public var backend = BackendChoice.auto
        public var nowPlaying = NowPlayingName.own

        public init(policy: String? = nil, socket: String? = nil, verbose: Bool = false, backend: BackendChoice = .auto,
                    nowPlaying: NowPlayingName = .own) {
            self.policy = policy
            self.socket = socket
            self.verbose = verbose
            self.backend = backend
            self.nowPlaying = nowPlaying
        }

        /// What the command line asks for besides running the daemon.
        public enum Request: Equatable, Sendable {
            case run(Arguments)
            case help
            case version
        }

        /// A command line the daemon does not take: said on standard error, exit 64 (EX_USAGE, as
        /// `audio-policyd`'s own parser exits on a usage error).
        public struct UsageError: Error, Equatable, CustomStringConvertible {
            public var description: String
            public static let exitCode: Int32 = 64

            public init(description: String) {
                self.description = description
            }
        }

        /// Parses the arguments after the program's name: `--policy FILE`, `--socket PATH`, `--backend NAME` (each also
        /// as `--name=value`; the last one given counts), `-v`/`--verbose`, `-h`/`--help`, `--version`.
        public static func parse(_ arguments: [String]) throws(UsageError) -> Request {
            var parsed = Arguments()
            var rest = arguments[...]
            while let argument = rest.popFirst() {
                let name = argument.hasPrefix("--") ? String(argument.prefix { $0 != "=" }) : argument
                let inline = name.count < argument.count ? String(argument.dropFirst(name.count + 1)) : nil
                func value() throws(UsageError) -> String {
                    if let inline { return inline }
                    guard let next = rest.first, !next.hasPrefix("-") || next == "-" else {
                        throw UsageError(description: "missing value for '\(name)'")
                    }
                    return rest.removeFirst()
                }
                func flag() throws(UsageError) {
                    if inline != nil { throw UsageError(description: "'\(name)' takes no value") }
                }
                switch name {
                case "--policy": parsed.policy = try value()
                case "--socket": parsed.socket = try value()
                case "--backend":
                    let name = try value()
                    guard let backend = BackendChoice(rawValue: name) else {
                        throw UsageError(description: "unknown backend '\(name)' (alsa, pulse or auto)")
                    }
                    parsed.backend = backend
                case "--now-playing":
                    let text = try value()
                    guard let name = NowPlayingName(rawValue: text) else {
                        throw UsageError(description: "'--now-playing' takes own, mpris or none, not '\(text)'")
                    }
                    parsed.nowPlaying = name
                case "-v", "--verbose": try flag(); parsed.verbose = true
                case "-h", "--help": try flag(); return .help
                case "--version": try flag(); return .version
                default:
                    throw UsageError(description: argument.hasPrefix("-") ? "unknown option '\(argument)'"
                                                                          : "unexpected argument '\(argument)'")
                }
            }
            return .run(parsed)
        }

        /// The same as arguments, for ``parse(_:)``: how `audio-policyd run` hands its options over.
        public var commandLine: [String] {
            (policy.map { ["--policy=\($0)"] } ?? []) + (socket.map { ["--socket=\($0)"] } ?? [])
                + (verbose ? ["--verbose"] : []) + (backend == .auto ? [] : ["--backend=\(backend.rawValue)"])
                + (nowPlaying == .own ? [] : ["--now-playing=\(nowPlaying.rawValue)"])
        }

        public static let usage = "USAGE: \(DaemonLaunch.executableName) [--policy <policy>] [--socket <socket>] [--backend <backend>] [--verbose] [--now-playing <now-playing>]"

        /// `--help`.
        public static var help: String {
            """
            OVERVIEW: \(abstract)

            \(discussion)
            The same as `audio-policyd run`: the daemon alone, without the command-line tools.

            \(usage)

            OPTIONS:
              --policy <policy>       \(policyHelp)
              --socket <socket>       \(socketHelp)
              --backend <backend>     \(BackendChoice.help)
              -v, --verbose           \(verboseHelp)
              --now-playing <now-playing>
                                      \(nowPlayingHelp)
              --version               Show the version.
              -h, --help              Show help information.

            """
        }
    }
}
