import ControlProtocol
import Foundation

/// The daemon binary under test, running `run --verbose` against the test server with a runtime and
/// config folder of its own. Its stderr is kept (in memory and in a file) and every line wakes the
/// tests' waits. `deinit` kills it if it still runs, so no daemon outlives its test.
final class DaemonProcess {
    let folder: URL
    let socketPath: String
    let stderrFile: URL
    let policy: String?
    private let child: Child
    private let stderr: LineLog
    private let changes: Changes

    /// Starts the daemon and waits until it answers `status`, is connected, and has taken in every
    /// stream already on the server. Its journal's log lives in `runtime` (`XDG_RUNTIME_DIR`) and the
    /// durable copy in `stateHome` (`XDG_STATE_HOME`; default for each: a folder of its own), so a
    /// daemon started again on the same ones finds what the first left, as after a crash in the same
    /// session; on the same `stateHome` alone, as in a new session.
    init(policy: String? = nil, changes: Changes, stateHome: URL? = nil, runtime: URL? = nil,
         environment extra: [String: String] = [:], arguments: [String] = [], timeout: Double = 10) throws {
        self.policy = policy
        self.changes = changes
        folder = try TestEnvironment.temporaryFolder("audio-policyd-daemon")
        socketPath = folder.appendingPathComponent("control").path
        stderrFile = folder.appendingPathComponent("stderr.log")
        let binary = TestEnvironment.daemonBinary
        guard FileManager.default.isExecutableFile(atPath: binary) else {
            throw CommandFailure(description: "no daemon binary at \(binary): build it, or set AUDIO_POLICYD_BIN")
        }
        var environment = TestEnvironment.variables
        for (name, sub) in [("XDG_RUNTIME_DIR", "runtime"), ("XDG_CONFIG_HOME", "config"), ("XDG_STATE_HOME", "state")] {
            let shared = name == "XDG_STATE_HOME" ? stateHome : name == "XDG_RUNTIME_DIR" ? runtime : nil
            let path = shared?.path ?? folder.appendingPathComponent(sub).path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            environment[name] = path
        }
        environment.merge(extra) { _, new in new }
        let pipe = Pipe()
        child = try Child([binary, "run", "--verbose", "--socket", socketPath]
                            + (policy.map { ["--policy", $0] } ?? []) + arguments,
                          environment: environment, standardError: pipe)
        stderr = LineLog(reading: pipe, changes: changes, copyTo: stderrFile)
        try awaitReady(timeout: timeout)
    }

    deinit {
        child.kill()
        try? FileManager.default.removeItem(at: folder)
    }

    var pid: Int32 { child.pid }

    /// The daemon's resident memory now, in KiB (`VmRSS` in /proc/PID/status).
    var residentKiB: Int {
        get throws {
            let text = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
                  let kib = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
            else { throw CommandFailure(description: "no VmRSS in /proc/\(pid)/status") }
            return kib
        }
    }
    var isRunning: Bool { child.isRunning }
    /// Its exit status once it has exited (128+N for signal N), nil while it runs.
    var exitCode: Int32? { child.exitCode }

    // MARK: - Control socket

    /// Sends one request line on a new connection and returns the reply line.
    func request(_ line: String) throws -> String {
        do {
            return try ControlConnection(path: socketPath).request(line)
        } catch {
            // A daemon that went away says why in its log: the failure carries it.
            let state = exitCode.map { "exited with \($0)" } ?? "still running"
            throw CommandFailure(description: "\(error) (the daemon \(state); its log's last lines:\n"
                                 + logText.split(separator: "\n").suffix(12).joined(separator: "\n") + ")")
        }
    }

    /// `{"op":"status"}`, decoded.
    func status() throws -> StatusReport {
        let line = try request(#"{"id":1,"op":"status"}"#)
        let reply = try JSONDecoder().decode(ControlReply.self, from: Data(line.utf8))
        guard reply.ok, let status = reply.status else {
            throw CommandFailure(description: "status failed: \(line)")
        }
        return status
    }

    /// The status row of sink input `index`, if the daemon tracks it.
    func stream(_ index: UInt32?) throws -> StatusReport.Stream? {
        try status().streams.first { $0.index != nil && $0.index == index }
    }

    // MARK: - Signals and exit

    func signal(_ signal: Int32) { child.signal(signal) }

    /// SIGKILL, as a crash would: nothing is restored. Returns once it has gone.
    func kill() { child.kill() }

    /// SIGTERM, then waits for the exit; returns the exit code (nil if it did not exit in `timeout` s).
    func terminate(timeout: Double = 5) -> Int32? {
        child.signal(SIGTERM)
        return child.wait(timeout: timeout)
    }

    // MARK: - Log

    /// Everything the daemon wrote to stderr so far, one line each.
    var log: [String] { stderr.lines() }
    var logText: String { log.joined(separator: "\n") }

    /// Runs `body`; when it throws, throws its error with the end of the daemon's log, so that a red run
    /// says what the daemon did while the test waited (a CI run is not rerun to find out).
    func tellingItsLog<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw CommandFailure(description: "\(error)\nthe daemon's log (end):\n" + log.suffix(30).joined(separator: "\n"))
        }
    }
    /// How many lines so far (to look only at what comes after).
    var logCount: Int { stderr.count }

    /// Lines logged at warning level or above.
    var problems: [String] {
        log.filter { $0.contains(" warning audio-policyd") || $0.contains(" error audio-policyd")
            || $0.contains(" critical audio-policyd") }
    }

    /// Waits until the daemon logs a line containing `text` (after the first `after` lines).
    @discardableResult
    func awaitLog(_ text: String, after: Int = 0, timeout: Double = 5) throws -> String {
        try awaitLog("\"\(text)\"", after: after, timeout: timeout) { $0.contains(text) }
    }

    /// Waits until the daemon logs a line that `matches` (after the first `after` lines), for a log line
    /// that can come in more than one form.
    @discardableResult
    func awaitLog(_ what: String, after: Int = 0, timeout: Double = 5, where matches: @escaping (String) -> Bool) throws -> String {
        try changes.await("the daemon to log \(what)", timeout: timeout) { () throws -> Probe<String> in
            if let line = stderr.lines(from: after).first(where: matches) { return .done(line) }
            if let code = child.exitCode { throw CommandFailure(description: "the daemon exited with \(code):\n\(logText)") }
            return .waiting("\(stderr.count) lines, the last: \(stderr.lines().last ?? "none")")
        }
    }

    // MARK: - Private

    private func awaitReady(timeout: Double) throws {
        try changes.await("the daemon to be ready", timeout: timeout) { () throws -> Probe<Void> in
            if let code = child.exitCode {
                throw CommandFailure(description: "the daemon exited with \(code) while starting:\n\(logText)")
            }
            guard let status = try? status() else { return .waiting("no answer on \(socketPath)") }
            guard status.server != nil else { return .waiting("not connected to the sound server") }
            let known = Set(status.streams.compactMap(\.index))
            let present = try SoundServer.streams().map(\.index)
            let missing = present.filter { !known.contains($0) }
            return missing.isEmpty ? .done(()) : .waiting("streams not taken in yet: \(missing)")
        }
    }
}
