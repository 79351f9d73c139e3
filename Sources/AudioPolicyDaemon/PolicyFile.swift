import AudioPolicy
import FoundationEssentials
import FoundationGaps
import Glibc

/// Reads policy files for the daemon and the subcommands: a path, or the embedded default when there is none.
public enum PolicyFile {
    /// Loads the policy at `path`, or ``Policy/embeddedDefault`` for nil. An unreadable file is one
    /// located error, `PATH:1:1: cannot read: reason`, like any other.
    public static func load(path: String?) throws(LocatedErrors) -> Policy {
        guard let path else { return Policy.embeddedDefault }
        return try PolicyLoader.load(text: try readText(path), file: path)
    }

    /// The UTF-8 text of the file at `path`.
    public static func readText(_ path: String) throws(LocatedErrors) -> String {
        func cannotRead(_ reason: String) -> LocatedErrors {
            LocatedErrors([LocatedError(SourceLocation(file: path, line: 1, column: 1), "cannot read: \(reason)")])
        }
        // POSIX rather than Foundation, for the short reason (`no such file or directory`, `is a directory`).
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw cannotRead(errorText(errno)) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw cannotRead(errorText(errno)) }
            if count == 0 { break }
            bytes += buffer[..<count]
        }
        guard let text = String(bytes: bytes, encoding: .utf8) else { throw cannotRead("not UTF-8 text") }
        return text
    }

    /// The policy file in force: the explicit one, else the user's, else the system's, else none
    /// (the embedded default).
    public static func configuredPath(explicit: String?,
                                      environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let explicit { return explicit }
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"].map { $0 + "/.config" } ?? "")
        for candidate in [config + "/audio-policyd/policy.toml", "/etc/audio-policyd/policy.toml"]
            where FileManager.default.fileExists(atPath: candidate) {
            return candidate
        }
        return nil
    }

    private static func errorText(_ code: Int32) -> String {
        lowercasingFirst(String(cString: strerror(code)))
    }

    private static func lowercasingFirst(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.lowercased() + text.dropFirst()
    }
}

/// Writes each error as `FILE:LINE:COLUMN: message` on standard error.
public func printErrors(_ errors: LocatedErrors) {
    for error in errors.errors {
        StandardStream.error.write((error.description + "\n"))
    }
}
