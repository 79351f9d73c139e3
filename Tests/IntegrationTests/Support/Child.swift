import Foundation

/// A process a test started. Whatever happens to the test, it does not outlive it: `deinit` kills it
/// (SIGKILL) if it still runs. Its exit is awaited against a deadline, never forever.
///
/// Spawned with `posix_spawn` and reaped by a thread of its own: Foundation's `Process.run()` was
/// seen crashing (a bad `memmove`) while tests spawned many short commands.
final class Child: @unchecked Sendable {
    let name: String
    let pid: Int32
    private let exit = ExitBox()

    /// Starts `arguments` (the first one looked up in PATH). Standard input is /dev/null; output not
    /// given goes to /dev/null. With `defaultSignals`, the child starts with no signal blocked and every
    /// signal at its default action, as a shell would start it; otherwise it inherits the test thread's
    /// mask, which blocks SIGTERM, SIGINT and SIGHUP (so a shell script's `trap` on them never runs).
    init(_ arguments: [String], environment: [String: String]? = nil,
         standardOutput: Pipe? = nil, standardError: Pipe? = nil, defaultSignals: Bool = false) throws {
        name = arguments.joined(separator: " ")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        for (target, pipe) in [(Int32(1), standardOutput), (Int32(2), standardError)] {
            if let pipe {
                // Only the dup'ed copy may reach the child (or other children): EOF depends on it.
                _ = fcntl(pipe.fileHandleForReading.fileDescriptor, F_SETFD, FD_CLOEXEC)
                _ = fcntl(pipe.fileHandleForWriting.fileDescriptor, F_SETFD, FD_CLOEXEC)
                posix_spawn_file_actions_adddup2(&actions, pipe.fileHandleForWriting.fileDescriptor, target)
            } else {
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
            }
        }
        // env execs the program, so the pid we see is the program's (paplay's
        // `application.process.id`).
        let argv = (["/usr/bin/env"] + arguments).map { strdup($0) } + [nil]
        let variables = environment ?? ProcessInfo.processInfo.environment
        let envp = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        if defaultSignals {
            var none = sigset_t(), all = sigset_t()
            sigemptyset(&none)
            sigfillset(&all)
            posix_spawnattr_setsigmask(&attributes, &none)
            posix_spawnattr_setsigdefault(&attributes, &all)
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, "/usr/bin/env", &actions, &attributes, argv, envp)
        guard status == 0 else {
            throw CommandFailure(description: "cannot start `\(name)`: \(String(cString: strerror(status)))")
        }
        self.pid = pid
        // The parent's copies of the write ends must go, or readers never see end of file.
        try? standardOutput?.fileHandleForWriting.close()
        try? standardError?.fileHandleForWriting.close()
        let exit = exit, spawned = pid
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(spawned, &status, 0) < 0, errno == EINTR {}
            let signal = status & 0x7f
            exit.set(signal == 0 ? (status >> 8) & 0xff : 128 + signal)
        }
    }

    deinit {
        if exit.code == nil {
            Foundation.kill(pid, SIGKILL)
            _ = exit.wait(until: Date() + 5)
        }
    }

    var isRunning: Bool { exit.code == nil }
    /// The exit code (128 + N after signal N), once it has exited.
    var exitCode: Int32? { exit.code }

    func signal(_ signal: Int32) {
        if isRunning { Foundation.kill(pid, signal) }
    }

    /// Waits for the exit; nil if it still runs after `timeout` seconds.
    func wait(timeout: Double) -> Int32? {
        exit.wait(until: Date() + timeout)
    }

    /// SIGTERM, then SIGKILL if it has not gone within `timeout` seconds; returns the exit code.
    @discardableResult
    func stop(timeout: Double = 3) -> Int32? {
        signal(SIGTERM)
        if let code = wait(timeout: timeout) { return code }
        signal(SIGKILL)
        return wait(timeout: timeout)
    }

    /// SIGKILL, as when an app crashes; returns once it has gone.
    func kill() {
        signal(SIGKILL)
        _ = wait(timeout: 5)
    }
}

/// The exit code, set once by the reaping thread.
private final class ExitBox: @unchecked Sendable {
    private let condition = NSCondition()
    private var value: Int32?

    var code: Int32? {
        condition.lock()
        defer { condition.unlock() }
        return value
    }

    func set(_ code: Int32) {
        condition.lock()
        value = code
        condition.broadcast()
        condition.unlock()
    }

    func wait(until deadline: Date) -> Int32? {
        condition.lock()
        defer { condition.unlock() }
        while value == nil {
            if !condition.wait(until: deadline) { break }
        }
        return value
    }
}

/// A command that failed or hung.
struct CommandFailure: Error, CustomStringConvertible {
    var description: String
}

/// Runs a short command to completion and returns its standard output; throws with its standard error
/// when it fails or takes longer than `timeout` seconds.
@discardableResult
func run(_ arguments: String..., timeout: Double = 10) throws -> String {
    try run(arguments, timeout: timeout)
}

@discardableResult
func run(_ arguments: [String], timeout: Double = 10) throws -> String {
    let result = try outcome(arguments, timeout: timeout)
    guard result.code == 0 else {
        throw CommandFailure(description: "`\(arguments.joined(separator: " "))` exited with \(result.code): \(result.errors)")
    }
    return result.output
}

/// Runs a short command to completion and returns its exit code, standard output and standard error,
/// whatever the code; throws only when it takes longer than `timeout` seconds.
func outcome(_ arguments: [String], environment: [String: String]? = nil,
             timeout: Double = 10) throws -> (code: Int32, output: String, errors: String) {
    let output = Pipe(), errors = Pipe()
    let child = try Child(arguments, environment: environment, standardOutput: output, standardError: errors)
    let out = PipeReader(output), err = PipeReader(errors)
    guard let code = child.wait(timeout: timeout) else {
        child.kill()
        throw CommandFailure(description: "`\(child.name)` did not finish within \(timeout) s")
    }
    return (code, out.text(timeout: 2), err.text(timeout: 2))
}

/// Reads a pipe to its end on a thread of its own (so two pipes cannot block each other).
private final class PipeReader: @unchecked Sendable {
    private let condition = NSCondition()
    private var data: Data?

    init(_ pipe: Pipe) {
        let handle = pipe.fileHandleForReading
        Thread.detachNewThread { [self] in
            let all = handle.readDataToEndOfFile()
            condition.lock()
            data = all
            condition.broadcast()
            condition.unlock()
        }
    }

    func text(timeout: Double) -> String {
        let deadline = Date() + timeout
        condition.lock()
        defer { condition.unlock() }
        while data == nil {
            if !condition.wait(until: deadline) { break }
        }
        return String(decoding: data ?? Data(), as: UTF8.self)
    }
}
