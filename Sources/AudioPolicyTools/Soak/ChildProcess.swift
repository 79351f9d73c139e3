import AudioPolicyDaemon
import ControlProtocol
import FoundationEssentials
import FoundationGaps
import Glibc

/// A process the soak starts (the daemon, the restart command): `posix_spawn`ed with standard input
/// from /dev/null and its output appended to a log file, reaped with `waitpid` by the soak itself.
///
/// Not Foundation's `Process`: its `waitUntilExit` never returned for a restart command whose server
/// processes, left running, had inherited what it watches.
final class ChildProcess {
    /// How it ended.
    enum Exit: Equatable, CustomStringConvertible {
        case code(Int32)
        case signal(Int32)

        var description: String {
            switch self {
            case let .code(code): "exit status \(code)"
            case let .signal(signal): "signal \(signal)"
            }
        }
    }

    let pid: pid_t
    private(set) var exit: Exit?

    /// Starts `arguments[0]` (a path) with `environment`, its output appended to `log`.
    init(_ arguments: [String], environment: [String: String], log: String) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, arguments[0], &actions, nil, argv, envp)
        guard status == 0 else {
            throw SystemCallError(call: "posix_spawn \(arguments[0])", code: POSIXErrorCode(rawValue: status) ?? .EIO)
        }
        self.pid = pid
    }

    deinit {
        if isRunning {
            Glibc.kill(pid, SIGKILL)
            _ = wait(timeout: 5)
        }
    }

    /// Whether it still runs (reaping it if it has exited).
    var isRunning: Bool {
        reap()
        return exit == nil
    }

    func signal(_ signal: Int32) {
        if isRunning { Glibc.kill(pid, signal) }
    }

    /// Waits for the exit, up to `timeout` seconds (polling every 10 ms: only for exits expected now).
    func wait(timeout: Double) -> Exit? {
        let deadline = Date() + timeout
        while isRunning, Date() < deadline { usleep(10_000) }
        return exit
    }

    private func reap() {
        guard exit == nil else { return }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        guard result == pid else { return }
        let signal = status & 0x7f
        exit = signal == 0 ? .code((status >> 8) & 0xff) : .signal(signal)
    }
}
