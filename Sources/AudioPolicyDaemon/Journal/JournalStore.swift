import ControlProtocol
import FoundationEssentials
import FoundationGaps
import Glibc

/// Where the journal lives on disk, and the two things done with it: read it at start, record every
/// change before it is made.
///
/// The file is an append-only log of ``JournalFile`` records, one JSON line each; the last whole line
/// is the journal. Recording a change appends one line to the page cache (a few microseconds), so a
/// daemon that crashes or is killed at any instant leaves the record of every change it had sent: the
/// kernel keeps what `write(2)` took whether or not the process lives on. Making the line survive a
/// power cut (`fdatasync`) is done by a thread of its own (``JournalSyncer``) right after, off the path from a new stream to
/// its duck; after a power cut no stream is left to restore, and the server saves its own stream
/// volumes lazily (module-stream-restore: seconds later), so the record is on disk before any ducked
/// level the server could have saved. A line cut short by a power cut is dropped and the one before it
/// used. While the daemon runs, a journal that empties gets an empty record (no file is created or
/// removed on the way to a duck); ``finish()`` removes the file when the last record is empty, so after
/// a clean stop with nothing left changed there is no file at all. A log grown past
/// ``compactionSize`` is replaced by its last record (write, fsync, rename, fsync the folder: the old
/// file or the new, never a mix) when the caller says the moment is right (``compactIfDue()``: after
/// the change's requests have left), not while a change waits to be made.
///
/// With a ``durableCopy`` the log lives on tmpfs (`$XDG_RUNTIME_DIR`, kept while the user's session
/// lasts): appending to it never waits for a disk, not even for the file system's own journal, and
/// nothing syncs it. The sync thread writes each new record to the durable copy instead (write, fsync,
/// rename, fsync the folder; the newest only, when several wait), moments after the log has it. The
/// log is read when it is there (a crash or a restart in the same session: it is the newest); the
/// durable copy when it is not (after a reboot or a new session). Both go at a clean stop that leaves
/// nothing changed.
public final class JournalStore {
    /// The journal file: the log every change is appended to.
    public let path: String
    /// Where the record is made durable in the background, when ``path`` is on tmpfs; nil: ``path``
    /// itself is synced.
    public let durableCopy: String?
    /// The log, open for appending while the journal has entries; -1 when there is no file.
    private var log: Int32 = -1
    private var logSize = 0
    /// The last record saved holds no entries.
    private var savedEmpty = true
    /// Syncs appended lines to disk, and closes replaced descriptors after their last sync.
    private let disk = JournalSyncer()
    /// Each stream's entry as it would be recorded, encoded ahead (``prepare(_:)``).
    private var encodedEntries: [UInt32: (entry: JournalEntry, json: Data)] = [:]

    /// The last record written, for compacting the log to it.
    private var lastRecord = Data()
    /// The log has grown past ``compactionSize``: ``compactIfDue()`` replaces it by its last record.
    public private(set) var compactionDue = false

    /// A log this long is due to be replaced by its last record (``compactIfDue()``).
    public static let compactionSize = 64 * 1024
    /// A log this long is replaced at the next change even if ``compactIfDue()`` never came.
    static let compactionLimit = 4 * compactionSize

    public init(path: String, durableCopy: String? = nil) {
        self.path = path
        self.durableCopy = durableCopy
    }

    deinit {
        if log >= 0 { disk.submit(.close(log)) }
        disk.stop()
    }

    /// `$XDG_STATE_HOME/audio-policyd/journal.json`, else `~/.local/state/audio-policyd/journal.json`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let state = environment["XDG_STATE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? (environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? FileManager.default.homeDirectoryForCurrentUser.path) + "/.local/state"
        return state + "/audio-policyd/journal.json"
    }

    /// `$XDG_RUNTIME_DIR/audio-policyd/journal.json` (tmpfs on a desktop), or nil without one: where
    /// the log goes when its durable copy is at ``defaultPath(environment:)``.
    public static func defaultLogPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") ? $0 + "/audio-policyd/journal.json" : nil }
    }

    var folder: String { path.pathFolder }

    /// The file ``load(now:setAside:)`` reads: the log, or the durable copy when there is no log.
    public var readPath: String {
        guard let durableCopy, access(path, F_OK) != 0 else { return path }
        return durableCopy
    }

    // MARK: - Reading

    /// What was found at start.
    public enum Loaded: Equatable, Sendable {
        /// No journal: the last run ended with nothing changed (or there was none).
        case empty
        /// Streams an earlier run had changed and not restored.
        case entries([JournalEntry])
        /// As ``entries(_:)``, from the record before the last: the last was cut short (the machine
        /// stopped while it was being written).
        case cutShort([JournalEntry])
        /// The file could not be used: it was renamed to `setAside` (nil if even that failed).
        case corrupt(reason: String, setAside: String?)
    }

    /// Reads the journal: its last whole record. A file whose last whole record is unreadable (another
    /// program's file, a future format, a record cut short with none before it) is renamed
    /// `journal.json.corrupt-<time>`, so it can be looked at and is never read again; the daemon starts
    /// as if there were none. With `setAside: false` nothing is renamed (for looking at the journal of
    /// a daemon that runs).
    public func load(now: Date = Date(), setAside: Bool = true) -> Loaded {
        let file = readPath
        func unusable(_ reason: String) -> Loaded {
            setAside ? self.setAside(file, reason: reason, now: now) : .corrupt(reason: reason, setAside: nil)
        }
        // Opened by hand: Foundation's reading would give "error 256" for every reason alike.
        let fd = open(file, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            // No file, or a folder on its way that is not one: no journal either way.
            if errno == ENOENT || errno == ENOTDIR { return .empty }
            return unusable("cannot read it: \(SystemCallError.current("open \(file)"))")
        }
        let data: Data
        do {
            data = try readToEnd(closing: fd)
        } catch {
            return unusable("cannot read it: \(errorMessage(error))")
        }
        let newline = UInt8(ascii: "\n")
        var lines = data.split(separator: newline, omittingEmptySubsequences: true)
        guard let last = lines.last else { return .empty }
        // A last line without its newline was being written when the machine stopped: a record of
        // its own if it reads whole, else the one before it is the journal.
        var cutShort = false
        if data.last != newline {
            lines.removeLast()
            if let whole = try? JournalFile.decode(Data(last)) {
                return whole.entries.isEmpty ? .empty : .entries(whole.entries)
            }
            if lines.isEmpty { return unusable("its only record is cut short") }
            cutShort = true
        }
        do {
            let file = try JournalFile.decode(Data(lines[lines.count - 1]))
            if file.entries.isEmpty { return .empty }
            return cutShort ? .cutShort(file.entries) : .entries(file.entries)
        } catch {
            return unusable(error.description)
        }
    }

    private func setAside(_ path: String, reason: String, now: Date) -> Loaded {
        var seconds = time_t(now.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let stamp = String(printf: "%04d%02d%02dT%02d%02d%02dZ", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
                           parts.tm_hour, parts.tm_min, parts.tm_sec)
        var target = "\(path).corrupt-\(stamp)"
        var attempt = 1
        while FileManager.default.fileExists(atPath: target) {
            attempt += 1
            target = "\(path).corrupt-\(stamp)-\(attempt)"
        }
        guard rename(path, target) == 0 else {
            // Could not move it: at least never read it again.
            unlink(path)
            return .corrupt(reason: reason, setAside: nil)
        }
        Self.fsyncFolder(path.pathFolder)
        return .corrupt(reason: reason, setAside: target)
    }

    // MARK: - Writing

    /// Makes `entries` the journal (no file when there are none). On return the record is in the
    /// kernel's hands (it survives this process); it reaches the disk moments later (``flush()``).
    public func save(_ entries: [JournalEntry]) throws {
        savedEmpty = entries.isEmpty
        if entries.isEmpty, log < 0 { return try remove() }
        let record = JournalFile.record(JournalFile(entries: entries).entries.map(encoded))
        lastRecord = record
        if log >= 0, logSize + record.count <= Self.compactionLimit {
            try append(record)
            compactionDue = logSize > Self.compactionSize
            return
        }
        // No log open yet: start one, unless a file is there (an earlier run's, maybe ending in a cut
        // record that a line appended to it would be glued to); a long log: start over.
        if log < 0, access(path, F_OK) != 0 {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw SystemCallError.current("create \(path)") }
            log = fd
            logSize = 0
            try append(record, newFile: true)
        } else {
            try replace(with: record)
            if let durableCopy { disk.submit(.copy(record, to: durableCopy)) }
        }
    }

    /// Replaces a log grown past ``compactionSize`` by its last record. Call when nothing waits on the
    /// daemon (after a change's requests were sent): it writes and syncs a new file.
    public func compactIfDue() throws {
        guard compactionDue, log >= 0 else { return }
        try replace(with: lastRecord)
    }

    /// Encodes `entry` now, so that recording it later costs no encoding (call when a stream appears
    /// or what it is changes, off the way to a decision). Keeps one entry per stream.
    public func prepare(_ entry: JournalEntry) {
        guard encodedEntries[entry.sinkInput]?.entry != entry else { return }
        encodedEntries[entry.sinkInput] = (entry, JournalFile.encoded(entry))
    }

    /// The stream is gone: its prepared entry goes too.
    public func forget(_ sinkInput: UInt32) {
        encodedEntries[sinkInput] = nil
    }

    private func encoded(_ entry: JournalEntry) -> Data {
        if let known = encodedEntries[entry.sinkInput], known.entry == entry { return known.json }
        return JournalFile.encoded(entry)
    }

    /// Why the last durable copy written in the background could not be; nil when it was, or none
    /// was tried yet. (The log still holds the record: a crash is covered, a power cut is not.)
    public func durableCopyFailure() -> String? {
        disk.copyState()
    }

    /// A descriptor that becomes readable when ``durableCopyFailure()`` changes (a copy failed, or
    /// one was written again), until that is called; nil without a durable copy. Watch it, do not
    /// close it.
    public var durableCopySignal: Int32? {
        durableCopy != nil && disk.copyStateSignal >= 0 ? disk.copyStateSignal : nil
    }

    /// Waits until everything saved so far is on disk.
    public func flush() {
        disk.waitUntilIdle()
    }

    /// At a clean stop: removes the file if the journal is empty, and waits for the disk.
    public func finish() {
        if savedEmpty, log >= 0 { try? remove() }
        closeLog()
        flush()
    }

    private func append(_ record: Data, newFile: Bool = false) throws {
        do {
            try Self.writeAll(record, to: log, name: path)
        } catch {
            // Part of the line may be in the file: the next save starts a new one.
            closeLog()
            throw error
        }
        logSize += record.count
        if let durableCopy {
            disk.submit(.copy(record, to: durableCopy))
            return
        }
        disk.submit(.sync(log))
        if newFile { disk.submit(.syncFolder(folder)) }
    }

    /// No entries: the file goes.
    private func remove() throws {
        closeLog()
        guard unlink(path) == 0 || errno == ENOENT else { throw SystemCallError.current("remove \(path)") }
        if let durableCopy {
            disk.submit(.remove(durableCopy))
        } else {
            disk.submit(.syncFolder(folder))
        }
    }

    /// Replaces the file with a log holding `record` alone, atomically and durably, and appends to it
    /// from now on.
    private func replace(with record: Data) throws {
        // A log on tmpfs is never synced: its durable copy is.
        let fd = try Self.replaceFile(path, with: record, durably: durableCopy == nil)
        closeLog()
        // The descriptor still names the renamed file: append to it.
        guard lseek(fd, 0, SEEK_END) >= 0, fcntl(fd, F_SETFL, O_APPEND) == 0 else {
            close(fd)
            throw SystemCallError.current("reopen \(path)")
        }
        log = fd
        logSize = record.count
        compactionDue = false
    }

    /// Replaces the file at `path` with `record` the atomic way: write `path.tmp`, rename it over
    /// `path` (the old file or the new, never a mix); `durably`, with an fsync of the file before the
    /// rename and of the folder after, so that it also holds after a power cut. Returns the new file,
    /// open for writing.
    static func replaceFile(_ path: String, with record: Data, durably: Bool) throws -> Int32 {
        let folder = path.pathFolder
        // A folder that cannot be made is told by the open below, with its reason.
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                 attributes: [.posixPermissions: 0o700])
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SystemCallError.current("create \(temporary)") }
        do {
            try writeAll(record, to: fd, name: temporary)
            guard !durably || fsync(fd) == 0 else { throw SystemCallError.current("fsync \(temporary)") }
            guard rename(temporary, path) == 0 else { throw SystemCallError.current("rename \(temporary) to \(path)") }
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        if durably { fsyncFolder(folder) }
        return fd
    }

    private func closeLog() {
        guard log >= 0 else { return }
        let fd = log
        log = -1
        logSize = 0
        compactionDue = false
        // After the syncs queued before it.
        disk.submit(.close(fd))
    }

    private static func writeAll(_ bytes: Data, to fd: Int32, name: String) throws {
        var failure: SystemCallError?
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count, let base = raw.baseAddress {
                let written = write(fd, base + offset, raw.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else {
                    failure = SystemCallError.current("write \(name)")
                    return
                }
                offset += written
            }
        }
        if let failure { throw failure }
    }

    /// Makes a rename, creation or unlink in the folder durable.
    static func fsyncFolder(_ folder: String) {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}

/// Everything left to read from `fd` (which it closes).
private func readToEnd(closing fd: Int32) throws -> Data {
    defer { close(fd) }
    var data = Data()
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = read(fd, &chunk, chunk.count)
        if count < 0, errno == EINTR { continue }
        guard count >= 0 else { throw SystemCallError.current("read") }
        if count == 0 { return data }
        data.append(contentsOf: chunk[..<count])
    }
}
