import Foundation

/// A command run to its end: its exit status and what it wrote, both pipes drained together.
///
/// Shared by the test targets that run `audio-policyd` whole (`check` fuzzed, the commands that load the
/// policy in force): read one pipe to its end first and a command with much to say on the other (a file
/// with many errors fills stderr's 64 KiB) waits on it forever.
public struct CommandOutcome: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    /// Runs `executable` with `arguments`, in this process's environment changed by `environment`.
    public static func run(_ executable: String, _ arguments: [String],
                           environment changes: [String: String] = [:]) throws -> CommandOutcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !changes.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(changes) { _, new in new }
        }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stderrRead = DispatchGroup()
        nonisolated(unsafe) var stderr = Data()
        DispatchQueue.global().async(group: stderrRead) { stderr = err.fileHandleForReading.readDataToEndOfFile() }
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        stderrRead.wait()
        process.waitUntilExit()
        return CommandOutcome(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                              stderr: String(decoding: stderr, as: UTF8.self))
    }
}
