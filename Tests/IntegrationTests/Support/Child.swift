import Foundation

/// A process a test started. Whatever happens to the test, it does not outlive it: `deinit` kills it
/// (SIGKILL) if it still runs. Its exit is awaited against a deadline, never forever.
final class Child: @unchecked Sendable {
    let name: String
    private let process = Process()
    private let exit = ExitBox()

    /// Starts `arguments` (the first one looked up in PATH). Standard input is /dev/null; output not
    /// given goes to /dev/null.
    init(_ arguments: [String], environment: [String: String]? = nil,
         standardOutput: Pipe? = nil, standardError: Pipe? = nil) throws {
        name = arguments.joined(separator: " ")
        // env execs the program, so the pid we see is the program's (paplay's
        // `application.process.id`).
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = standardOutput ?? FileHandle.nullDevice
        process.standardError = standardError ?? FileHandle.nullDevice
        process.terminationHandler = { [exit] process in
            let code = process.terminationReason == .uncaughtSignal
                ? 128 + process.terminationStatus : process.terminationStatus
            exit.set(code)
        }
        try process.run()
    }

    deinit {
        if exit.code == nil {
            Foundation.kill(process.processIdentifier, SIGKILL)
            _ = exit.wait(until: Date() + 5)
        }
    }

    var pid: Int32 { process.processIdentifier }
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

/// The exit code, set once from Foundation's termination handler thread.
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
    let output = Pipe(), errors = Pipe()
    let child = try Child(arguments, standardOutput: output, standardError: errors)
    let out = PipeReader(output), err = PipeReader(errors)
    guard let code = child.wait(timeout: timeout) else {
        child.kill()
        throw CommandFailure(description: "`\(child.name)` did not finish within \(timeout) s")
    }
    let text = out.text(timeout: 2), errorText = err.text(timeout: 2)
    guard code == 0 else {
        throw CommandFailure(description: "`\(child.name)` exited with \(code): \(errorText)")
    }
    return text
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
