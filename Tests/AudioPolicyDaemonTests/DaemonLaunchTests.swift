import AudioPolicyDaemon
import Testing

/// `audio-policyd-daemon`'s command line: `audio-policyd run`'s options, parsed by hand.
@Suite("The daemon-only executable's options")
struct DaemonLaunchTests {
    typealias Arguments = DaemonLaunch.Arguments

    @Test("run's options, as --name value and --name=value; the last one given counts")
    func parsesRunsOptions() throws {
        #expect(try Arguments.parse([]) == .run(Arguments()))
        #expect(try Arguments.parse(["--policy", "p.toml", "--socket", "/s", "-v"])
            == .run(Arguments(policy: "p.toml", socket: "/s", verbose: true)))
        #expect(try Arguments.parse(["--policy=p.toml", "--verbose", "--socket=/s=x"])
            == .run(Arguments(policy: "p.toml", socket: "/s=x", verbose: true)))
        #expect(try Arguments.parse(["--policy", "a", "--policy", "b"]) == .run(Arguments(policy: "b")))
        #expect(try Arguments.parse(["--policy=-odd"]) == .run(Arguments(policy: "-odd")))
        #expect(try Arguments.parse(["-h"]) == .help)
        #expect(try Arguments.parse(["--verbose", "--help"]) == .help)
        #expect(try Arguments.parse(["--version"]) == .version)
        #expect(try Arguments.parse(["--backend", "alsa"]) == .run(Arguments(backend: .alsa)))
        #expect(try Arguments.parse(["--backend=pulse", "--backend", "auto"]) == .run(Arguments(backend: .auto)))
    }

    @Test("what it does not take is a usage error (exit 64) that names it",
          arguments: [(["--bogus"], "unknown option '--bogus'"), (["-x"], "unknown option '-x'"),
                      (["run"], "unexpected argument 'run'"), (["--policy"], "missing value for '--policy'"),
                      (["--socket", "--verbose"], "missing value for '--socket'"),
                      (["--verbose=yes"], "'--verbose' takes no value"),
                      (["--backend", "oss"], "unknown backend 'oss' (alsa, pulse or auto)"),
                      (["--backend"], "missing value for '--backend'")])
    func rejects(_ arguments: [String], _ message: String) {
        #expect(throws: Arguments.UsageError(description: message)) { try Arguments.parse(arguments) }
        #expect(Arguments.UsageError.exitCode == 64)
    }

    @Test("`audio-policyd run` hands its options over as a command line that parses back to them")
    func commandLineRoundTrips() throws {
        for arguments in [Arguments(), Arguments(verbose: true), Arguments(policy: "/p q.toml", socket: "-s"),
                          Arguments(policy: "", socket: "/run/x=y", verbose: true), Arguments(backend: .alsa),
                          Arguments(backend: .pulse)] {
            #expect(try Arguments.parse(arguments.commandLine) == .run(arguments))
        }
    }

    @Test("the policy in force: the explicit one, else the user's, else the system's, else the embedded default")
    func configuredPolicy() {
        #expect(PolicyFile.configuredPath(explicit: "/x.toml", environment: [:]) == "/x.toml")
        // A config folder with no policy in it, and (on a test machine) no /etc/audio-policyd.
        let none = PolicyFile.configuredPath(explicit: nil, environment: ["XDG_CONFIG_HOME": "/nonexistent"])
        #expect(none == nil || none == "/etc/audio-policyd/policy.toml")
    }
}
