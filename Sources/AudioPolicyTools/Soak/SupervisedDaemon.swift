import AudioPolicyDaemon
import ControlProtocol
import FoundationEssentials
import Glibc

/// The daemon under soak: `audio-policyd run` as a child process that the soak starts, kills with
/// SIGKILL (a crash) and starts again on the same runtime and state folders (so its journal is found,
/// as after a crash in the same session), and whose every other exit is a crash to report.
final class SupervisedDaemon {
    typealias Exit = ChildProcess.Exit

    let executable: String
    let folder: String
    let policy: String?
    var socketPath: String { folder + "/control" }
    /// How many times it was started; its log is `daemon-N.log`.
    private(set) var starts = 0
    private var process: ChildProcess?

    init(executable: String, folder: String, policy: String?) {
        self.executable = executable
        self.folder = folder
        self.policy = policy
    }

    var logPath: String { folder + "/daemon-\(starts).log" }
    var pid: Int32? { process?.pid }

    /// Starts it; returns once it runs (not once it answers: see ``status()``).
    func start() throws {
        starts += 1
        var environment = ProcessInfo.processInfo.environment
        for (name, sub) in [("XDG_RUNTIME_DIR", "runtime"), ("XDG_STATE_HOME", "state"), ("XDG_CONFIG_HOME", "config")] {
            let path = folder + "/" + sub
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            environment[name] = path
        }
        process = try ChildProcess(
            [executable, "run", "--verbose", "--socket", socketPath] + (policy.map { ["--policy", $0] } ?? []),
            environment: environment, log: logPath)
    }

    /// How it ended, if it has (without waiting).
    var exit: Exit? {
        guard let process, !process.isRunning else { return nil }
        return process.exit
    }

    var isRunning: Bool { process?.isRunning == true }

    /// SIGKILL, as a crash: nothing of its own runs. Returns once it has gone.
    func kill() {
        process?.signal(SIGKILL)
        _ = process?.wait(timeout: 10)
    }

    /// SIGTERM (it restores every stream), then its exit; nil if it did not exit within `timeout` s
    /// (it is killed then).
    func terminate(timeout: Double) -> Exit? {
        guard let process else { return nil }
        process.signal(SIGTERM)
        guard let exit = process.wait(timeout: timeout) else {
            kill()
            return nil
        }
        return exit
    }

    /// Forgets an exited process (its exit was dealt with).
    func forget() {
        process = nil
    }

    /// Its resident memory, KiB; nil when it does not run.
    var residentKiB: Int? {
        guard let pid, isRunning,
              let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return nil }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    }

    /// Its status over the control socket; nil when it does not answer.
    func status() -> StatusReport? {
        guard let client = try? ControlClient(path: socketPath),
              let reply = try? client.request(ControlRequest(id: .number(1), op: .status)), reply.ok else { return nil }
        return reply.status
    }

    /// The last `count` lines of its current log.
    func logTail(_ count: Int = 15) -> String {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").suffix(count).joined(separator: "\n")
    }
}
