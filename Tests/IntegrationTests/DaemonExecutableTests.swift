import Foundation
import Testing
import TestRequirements

// `audio-policyd-daemon`, the daemon alone, and `audio-policyd run`, which hands over to it: the same
// options, the same errors. Usage and policy errors need no sound server; starting does.

@Suite("The daemon-only executable: its options and errors")
struct DaemonExecutableTests {
    let daemon = TestEnvironment.daemonOnlyBinary

    init() throws {
        try #require(FileManager.default.isExecutableFile(atPath: daemon), "no \(daemon): build every product")
    }

    @Test("an option it does not take: a message that names it on stderr, exit 64, nothing started")
    func rejectsAnUnknownOption() throws {
        let result = try outcome([daemon, "--bogus", "--verbose"])
        #expect(result.code == 64)
        #expect(result.errors.hasPrefix("audio-policyd-daemon: unknown option '--bogus'\nUSAGE: audio-policyd-daemon "),
                "\(result.errors)")
        #expect(result.output.isEmpty)
        // `run` rejects it too, with the same exit code.
        #expect(try outcome([TestEnvironment.daemonBinary, "run", "--bogus"]).code == 64)
        // Controls: --help and --version are taken.
        let help = try outcome([daemon, "--help"])
        #expect(help.code == 0 && help.output.contains("--policy <policy>") && help.output.contains("--socket <socket>"),
                "\(help)")
        #expect(try outcome([daemon, "--version"]).output == run(TestEnvironment.daemonBinary, "--version"))
    }

    @Test("a policy that does not load: FILE:LINE:COLUMN lines on stderr and exit 1, from both executables alike")
    func reportsABadPolicy() throws {
        let folder = try TestEnvironment.temporaryFolder("audio-policyd-daemon-exe")
        defer { try? FileManager.default.removeItem(at: folder) }
        let policy = folder.appendingPathComponent("bad.toml").path
        try "[[rule]]\nname = 3\n".write(toFile: policy, atomically: true, encoding: .utf8)
        var environment = TestEnvironment.variables
        environment["XDG_RUNTIME_DIR"] = folder.path
        environment["XDG_STATE_HOME"] = folder.path
        let alone = try outcome([daemon, "--policy", policy, "--socket", folder.path + "/control"],
                                environment: environment)
        #expect(alone.code == 1)
        #expect(alone.errors.contains("\(policy):2:8: `name` must be a string, got integer\n"), "\(alone.errors)")
        #expect(alone.errors.split(separator: "\n").allSatisfy { $0.hasPrefix(policy + ":") }, "\(alone.errors)")
        let viaRun = try outcome([TestEnvironment.daemonBinary, "run", "--policy=\(policy)", "--socket", folder.path + "/control"],
                                 environment: environment)
        #expect(viaRun.code == alone.code && viaRun.errors == alone.errors, "\(viaRun)")
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/control"), "a socket was made")
    }
}

@Suite(
    "The daemon-only executable on the sound server",
    .serialized,
    .needs(TestEnvironment.soundServerMissing)
)
final class DaemonExecutableLiveTests {
    let session: LiveSession

    init() throws {
        session = try LiveSession()
    }

    @Test("`audio-policyd run` with a good policy becomes audio-policyd-daemon (same pid), starts, and stops with 0")
    func runHandsOverAndStarts() throws {
        let daemon = try session.startDaemon(policy: TestEnvironment.defaultPolicy.path)
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(daemon.pid)/exe")
        #expect(executable == URL(fileURLWithPath: TestEnvironment.daemonOnlyBinary).resolvingSymlinksInPath().path)
        #expect(try daemon.status().policy == TestEnvironment.defaultPolicy.path)
        #expect(daemon.terminate() == 0)
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }
}
