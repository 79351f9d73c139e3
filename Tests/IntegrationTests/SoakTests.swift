import Foundation
import Testing
import TestRequirements

// `audio-policyd soak` as the test command runs it: a short churn on the current server (PulseAudio,
// then PipeWire in scripts/test) with at least one server restart and one daemon SIGKILL, which must
// find nothing; and a control run with a fault made on purpose, which must fail, so the checker is
// shown able to fail.
//
//   eval "$(scripts/sound-server start pulseaudio /tmp/sv-pa)"
//   swift test --skip-build --no-parallel --filter SoakTests

@Suite(
    "Soak: churn on the real server, with server restarts and daemon crashes",
    .serialized,
    .needs(TestEnvironment.soundServerMissing)
)
struct SoakTests {
    /// Seconds of churn in the test command's run.
    static let churnSeconds = 40

    /// The user changes only streams at rest here (`--users-avoid-ramps`): a change that lands just before
    /// the daemon's next ramp step is overwritten unseen, a known gap the longer runs keep in.
    @Test("40 s of churn with a server restart and a daemon SIGKILL: every check passes")
    func churn() throws {
        let server = try SoundServerProcess.current()
        let script = TestEnvironment.packageRoot.appendingPathComponent("scripts/sound-server").path
        let (code, output) = try Self.soak([
            "--duration", "\(Self.churnSeconds)s", "--seed", "20261123", "--checkpoint-every", "8s",
            "--kill-every", "12s", "--restart-every", "11s", "--output-every", "6s", "--users-avoid-ramps",
            "--restart-server", "'\(script)' restart '\(server.directory)'",
        ], forgetting: false)
        let restarts = Self.count(after: "server restarts: ", in: output)
        let kills = Self.count(after: "daemon kills (SIGKILL): ", in: output)
        var wrong: [String] = []
        if code != 0 { wrong.append("exit code \(code)") }
        if !output.contains("violations: 0") { wrong.append("violations found") }
        if restarts < 1 || kills < 1 { wrong.append("restarts \(restarts), kills \(kills)") }
        if Self.count(after: "checkpoints: ", in: output) < 3 { wrong.append("fewer than 3 checkpoints") }
        // Headsets came and went: lost with streams on them, and a profile switch (one left empty is not
        // sure: a stream may start on it while the user moves the others away).
        if Self.count(after: "outputs: ", in: output) < 3 { wrong.append("fewer than 3 headsets") }
        if Self.count(after: "headsets (", in: output) < 1 { wrong.append("no headset was lost with streams on it") }
        if Self.count(after: "lost with streams on them, ", in: output) < 1 { wrong.append("no profile switch") }
        if Self.count(after: "streams: ", in: output) < 100 { wrong.append("fewer than 100 streams") }
        // What is wrong comes last: a log that keeps only the end of a long message still shows it.
        #expect(wrong.isEmpty, "\(output)\n→ \(wrong.joined(separator: "; "))")
    }

    @Test("control: a surviving stream left at another volume behind the user's back is found")
    func injectedFaultIsFound() throws {
        let (code, output) = try Self.soak([
            "--duration", "12s", "--seed", "3", "--checkpoint-every", "4s", "--kill-every", "0", "--output-every", "0",
            "--inject-fault", "stray-volume",
        ])
        let found = output.split(separator: "\n").contains { $0.contains("VIOLATION: checkpoint") && $0.contains("the user's level is") }
        #expect(code == 1, "\(output)")
        #expect(output.contains("fault injected"), "\(output)")
        #expect(found, "\(output)")
        #expect(!output.contains("violations: 0"), "\(output)")
        if code == 1, found { Self.removeLogs(of: output) }
    }

    @Test("control: after a headset with music on it goes away, a user who never acts finds the music still muted")
    func lostOutputHoldsTheMute() throws {
        let (code, output) = try Self.soak([
            "--duration", "14s", "--seed", "5", "--rate", "40", "--user-changes", "0", "--checkpoint-every", "7s", "--kill-every", "0",
            "--output-every", "3s", "--settle-timeout", "5s", "--inject-fault", "user-ignores-loss",
        ])
        let found = output.split(separator: "\n").contains { $0.contains("VIOLATION: checkpoint") && $0.contains("the daemon still has stream") }
        #expect(code == 1, "\(output)")
        #expect(output.contains("fault injected: the user leaves"), "\(output)")
        #expect(found, "\(output)")
        if code == 1, found { Self.removeLogs(of: output) }
    }

    // MARK: - Helpers

    /// Runs `audio-policyd soak` with `arguments`; returns its exit code and output. With `forgetting`,
    /// on the server with nothing saved: an earlier soak's injected fault (a stray volume, a hold nobody
    /// ends) leaves saved levels that the next stream of the key starts at, so a control could find
    /// nothing to hold (seen on PipeWire). The churn runs on the server as the tests before it left it,
    /// as a user's is: on a fresh one every level is a balanced 100 %, and a dead daemon's ramp step
    /// saved at a balanced level is a known gap (README, Longer soaks) that the churn would meet there.
    static func soak(_ arguments: [String], forgetting: Bool = true, timeout: Double = 180) throws -> (Int32, String) {
        if forgetting { try SoundServerProcess.current().forget() }
        let changes = Changes()
        let pipe = Pipe()
        let child = try Child([TestEnvironment.daemonBinary, "soak"] + arguments, standardOutput: pipe, standardError: pipe)
        let lines = LineLog(reading: pipe, changes: changes)
        guard let code = child.wait(timeout: timeout) else {
            child.kill()
            throw CommandFailure(description: "soak did not finish within \(timeout) s:\n"
                + lines.lines().joined(separator: "\n"))
        }
        // The reader thread takes the last lines a moment after the exit.
        try? changes.await("the soak's summary", timeout: 5) { () -> Probe<Void> in
            lines.lines().contains { $0.hasPrefix("  violations: ") } ? .done(()) : .waiting("not yet")
        }
        return (code, lines.lines().joined(separator: "\n"))
    }

    /// Removes the folder a soak kept its logs in (it keeps them when it finds a violation), once a
    /// control has found what it was made to find: left, they piled up in /tmp, two per test run.
    static func removeLogs(of output: String) {
        guard let range = output.range(of: "daemon logs: ") else { return }
        let path = String(output[range.upperBound...].prefix { $0 != "\n" })
        guard path.hasPrefix(NSTemporaryDirectory()) || path.hasPrefix("/tmp/") else { return }
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The number right after `label` in the summary (0 when absent).
    static func count(after label: String, in output: String) -> Int {
        guard let range = output.range(of: label) else { return 0 }
        return Int(output[range.upperBound...].prefix { $0.isNumber }) ?? 0
    }
}
