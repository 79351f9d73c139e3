import AudioPolicy
import ControlProtocol
import Foundation
import Testing

// `audio-policyd doctor` against the test leg's real server and a running daemon: what it reports, and
// its exit status, with the fault and without it.

/// One `doctor --json` run: its exit status and the checks it reported.
struct DoctorRun {
    var code: Int32
    var findings: [[String: Any]]
    var checks: [String] { findings.compactMap { $0["check"] as? String } }
    var problems: [String] { findings.filter { $0["severity"] as? String == "problem" }.compactMap { $0["check"] as? String } }

    init(socket: String) throws {
        let result = try outcome([TestEnvironment.daemonBinary, "doctor", "--json", "--socket", socket], timeout: 10)
        code = result.code
        let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
        findings = object?["findings"] as? [[String: Any]] ?? []
    }
}

extension DaemonTests {
    @Test("doctor reports a loaded module-role-cork and exits 1; unloaded, it is not reported (control); pipewire-pulse has no such module, and doctor reports none")
    func doctorReportsRoleCork() throws {
        let daemon = try startDaemon()
        guard TestEnvironment.serverKind == "pulseaudio" else {
            // The module is PulseAudio's: pipewire-pulse refuses to load it ("No such entity").
            #expect(throws: CommandFailure.self) { try run("pactl", "load-module", "module-role-cork") }
            let clean = try DoctorRun(socket: daemon.socketPath)
            #expect(!clean.checks.contains("role-cork"), "\(clean.findings)")
            return
        }
        let module = try run("pactl", "load-module", "module-role-cork").trimmingCharacters(in: .whitespacesAndNewlines)
        var unloaded = false
        defer { if !unloaded { _ = try? run("pactl", "unload-module", module) } }
        let loaded = try DoctorRun(socket: daemon.socketPath)
        #expect(loaded.checks.contains("role-cork"), "\(loaded.findings)")
        #expect(loaded.code == 1)

        try run("pactl", "unload-module", module)
        unloaded = true
        let clean = try DoctorRun(socket: daemon.socketPath)
        #expect(!clean.checks.contains("role-cork"), "\(clean.findings)")
        // Nothing else wrong with the test session (a display-less session's focus note does not count).
        #expect(clean.code == (clean.problems.isEmpty ? 0 : 1), "\(clean.findings)")
        #expect(!clean.checks.contains("daemon"), "the running daemon was not found: \(clean.findings)")
    }

    @Test("doctor reports the daemon not running, and exits 1 (control: the same session with it running)")
    func doctorReportsNoDaemon() throws {
        let folder = try TestEnvironment.temporaryFolder("doctor")
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = try DoctorRun(socket: folder.appendingPathComponent("control").path)
        #expect(missing.checks.contains("daemon") && missing.code == 1, "\(missing.findings)")
        let daemon = try startDaemon()
        #expect(try !DoctorRun(socket: daemon.socketPath).checks.contains("daemon"))
    }
}

extension MPRISTests {
    @Test("doctor names a music stream with no MPRIS player (it will be faded, not paused); mpv with mpv-mpris is not named (control)")
    func doctorReportsStreamsWithoutPlayers() throws {
        let mpv = try startMPV()
        let plain = try play(.otherMusic, role: "music", name: "music-two")
        let daemon = try startDaemon()
        try awaitStatus(daemon, "both streams in the daemon's status, mpv with its player") { status in
            status.streams.contains { $0.index == plain.index } && status.streams.contains { $0.index == mpv.index && $0.player == mpv.busName }
        }
        let report = try DoctorRun(socket: daemon.socketPath)
        let named = report.findings.filter { $0["check"] as? String == "no-player" }.compactMap { $0["problem"] as? String }
        #expect(named.contains { $0.contains("stream \(plain.index.map(String.init) ?? "?")") }, "\(report.findings)")
        #expect(!named.contains { $0.contains("stream \(mpv.index.map(String.init) ?? "?")") }, "\(report.findings)")
        #expect(!report.checks.contains("mpv-mpris"), "\(report.findings)")
        #expect(report.code == 1)
    }
}
