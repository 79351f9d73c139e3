import FoundationEssentials
import FoundationGaps
import Glibc

/// Makes the journal durable on a thread of its own — syncing the appended lines, or writing the
/// durable copy of a record kept on tmpfs — so that a decision never waits for the disk, nor for a
/// thread to be woken from a pool or started: handing work to a dispatch queue cost up to 3 ms here
/// when its worker had gone idle. The thread lives as long as the store and sleeps on a condition
/// variable in between (no wake-ups while there is nothing to do).
final class JournalSyncer: @unchecked Sendable {
    /// Work for the thread, done in the order it was submitted.
    enum Job {
        /// `fdatasync` the file.
        case sync(Int32)
        /// `fsync` the folder, so that a creation, rename or removal in it is durable.
        case syncFolder(String)
        /// Close a descriptor once the jobs before it are done.
        case close(Int32)
        /// Replace the file at `path` with `record`, atomically and durably (write, fsync, rename,
        /// fsync the folder). Skipped when a later copy to (or removal of) the same file is waiting.
        case copy(Data, to: String)
        /// Remove the file, durably.
        case remove(String)

        /// The file a copy or removal is about.
        var file: String? {
            switch self {
            case let .copy(_, path), let .remove(path): path
            case .sync, .syncFolder, .close: nil
            }
        }
    }

    private let condition = Condition()
    // Guarded by `condition`.
    private var jobs: [Job] = []
    private var busy = false
    private var stopping = false
    /// Why the last durable copy written could not be (nil: it was written, or none was tried).
    private var copyFailure: String?
    /// A pipe whose read end becomes readable when ``copyFailure`` changes, until ``copyState()``:
    /// the daemon's loop watches it and tells at once, not at the next change. -1s if none could be made.
    private let changePipe: (read: Int32, write: Int32)
    var copyStateSignal: Int32 { changePipe.read }

    init() {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            }
        }
        changePipe = (ends[0], ends[1])
        startThread("journal") { [self] in self.work() }
    }

    /// Queues `job`; returns at once.
    func submit(_ job: Job) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    deinit {
        if changePipe.read >= 0 { close(changePipe.read) }
        if changePipe.write >= 0 { close(changePipe.write) }
    }

    /// Why the last durable copy written could not be; nil when it was (or none was tried). Quiets
    /// ``copyStateSignal`` until the state changes again.
    func copyState() -> String? {
        condition.lock()
        defer { condition.unlock() }
        var drained = [UInt8](repeating: 0, count: 16)
        while changePipe.read >= 0, read(changePipe.read, &drained, drained.count) > 0 {}
        return copyFailure
    }

    /// Waits until every job submitted so far is done.
    func waitUntilIdle() {
        condition.lock()
        while !jobs.isEmpty || busy { condition.wait() }
        condition.unlock()
    }

    /// Finishes the jobs submitted so far, then ends the thread.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
        waitUntilIdle()
    }

    private func work() {
        while true {
            condition.lock()
            while jobs.isEmpty, !stopping { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let batch = jobs
            jobs = []
            busy = true
            condition.unlock()
            var lastCopy: String??
            for (position, job) in batch.enumerated() where !Self.superseded(job, by: batch[(position + 1)...]) {
                let failed = Self.run(job)
                if case .copy = job { lastCopy = .some(failed) }
            }
            condition.lock()
            if let lastCopy, lastCopy != copyFailure {
                copyFailure = lastCopy
                var byte: UInt8 = 1
                if changePipe.write >= 0 { _ = write(changePipe.write, &byte, 1) }
            }
            busy = false
            condition.broadcast()
            condition.unlock()
        }
    }

    /// A copy is moot when the same file is copied again, or removed, later in the batch.
    private static func superseded(_ job: Job, by later: ArraySlice<Job>) -> Bool {
        guard case let .copy(_, path) = job else { return false }
        return later.contains { $0.file == path }
    }

    /// Does `job`; returns why a durable copy failed.
    @discardableResult
    private static func run(_ job: Job) -> String? {
        switch job {
        case let .sync(fd):
            fdatasync(fd)
        case let .syncFolder(folder):
            JournalStore.fsyncFolder(folder)
        case let .close(fd):
            Glibc.close(fd)
        case let .copy(record, path):
            return writeDurably(record, to: path)
        case let .remove(path):
            if unlink(path) == 0 { run(.syncFolder(path.pathFolder)) }
        }
        return nil
    }

    /// Write to a temporary file, fsync, rename over `path`, fsync the folder: after a power cut the
    /// file holds the old record or the new, never a mix. A failure leaves the old one and says why.
    private static func writeDurably(_ record: Data, to path: String) -> String? {
        do {
            Glibc.close(try JournalStore.replaceFile(path, with: record, durably: true))
            return nil
        } catch {
            return errorMessage(error)
        }
    }
}
