import Foundation

/// Where the journal lives on disk, and the two things done with it: read it at start, replace it
/// atomically on every change.
///
/// A write goes to `journal.json.tmp`, is fsynced, renamed over `journal.json`, and the folder is
/// fsynced: after a crash or a power cut the file is the old journal or the new one, never a mix.
/// An empty journal is no file at all.
public struct JournalStore: Sendable {
    /// The journal file.
    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// `$XDG_STATE_HOME/audio-policyd/journal.json`, else `~/.local/state/audio-policyd/journal.json`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let state = environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()) + "/.local/state"
        return state + "/audio-policyd/journal.json"
    }

    var folder: String { (path as NSString).deletingLastPathComponent }

    // MARK: - Reading

    /// What was found at start.
    public enum Loaded: Equatable, Sendable {
        /// No journal: the last run ended with nothing changed (or there was none).
        case empty
        /// Streams an earlier run had changed and not restored.
        case entries([JournalEntry])
        /// The file could not be used: it was renamed to `setAside` (nil if even that failed).
        case corrupt(reason: String, setAside: String?)
    }

    /// Reads the journal. A corrupt or truncated one is renamed `journal.json.corrupt-<time>`, so it
    /// can be looked at and is never read again; the daemon starts as if there were none.
    public func load(now: Date = Date()) -> Loaded {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return .empty
        } catch {
            return setAside(reason: "cannot read: \(error.localizedDescription)", now: now)
        }
        do {
            let file = try JournalFile.decode(data)
            return file.entries.isEmpty ? .empty : .entries(file.entries)
        } catch {
            return setAside(reason: error.description, now: now)
        }
    }

    private func setAside(reason: String, now: Date) -> Loaded {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        var target = "\(path).corrupt-\(formatter.string(from: now))"
        var attempt = 1
        while FileManager.default.fileExists(atPath: target) {
            attempt += 1
            target = "\(path).corrupt-\(formatter.string(from: now))-\(attempt)"
        }
        guard rename(path, target) == 0 else {
            // Could not move it: at least never read it again.
            unlink(path)
            return .corrupt(reason: reason, setAside: nil)
        }
        fsyncFolder()
        return .corrupt(reason: reason, setAside: target)
    }

    // MARK: - Writing

    /// Replaces the journal with `entries` (removes it when there are none), atomically and durably.
    public func save(_ entries: [JournalEntry]) throws {
        guard !entries.isEmpty else {
            if unlink(path) != 0, errno != ENOENT { throw POSIXError.current("remove \(path)") }
            fsyncFolder()
            return
        }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw POSIXError.current("create \(temporary)") }
        let bytes = JournalFile(entries: entries).encoded()
        var failure: POSIXError?
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                guard let base = raw.baseAddress else { break }
                let written = write(fd, base + offset, raw.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else {
                    failure = POSIXError.current("write \(temporary)")
                    return
                }
                offset += written
            }
        }
        if failure == nil, fsync(fd) != 0 { failure = POSIXError.current("fsync \(temporary)") }
        close(fd)
        if let failure {
            unlink(temporary)
            throw failure
        }
        guard rename(temporary, path) == 0 else {
            let error = POSIXError.current("rename \(temporary) to \(path)")
            unlink(temporary)
            throw error
        }
        fsyncFolder()
    }

    /// Makes a rename or unlink in the folder durable.
    private func fsyncFolder() {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}
