import Foundation

/// Makes the journal's appended lines durable on a thread of its own, so that a decision never waits
/// for the disk — nor for a thread to be woken from a pool or started: handing work to a dispatch
/// queue cost up to 3 ms here when its worker had gone idle. The thread lives as long as the store
/// and sleeps on a condition variable in between (no wake-ups while there is nothing to sync).
final class JournalSyncer: @unchecked Sendable {
    /// Work for the thread, done in the order it was submitted.
    enum Job {
        /// `fdatasync` the file.
        case sync(Int32)
        /// `fsync` the folder, so that a creation, rename or removal in it is durable.
        case syncFolder(String)
        /// Close a descriptor once the jobs before it are done.
        case close(Int32)
    }

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var jobs: [Job] = []
    private var busy = false
    private var stopping = false

    init() {
        let thread = Thread { [self] in self.work() }
        thread.name = "audio-policyd journal"
        thread.start()
    }

    /// Queues `job`; returns at once.
    func submit(_ job: Job) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
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
            for job in batch { Self.run(job) }
            condition.lock()
            busy = false
            condition.broadcast()
            condition.unlock()
        }
    }

    private static func run(_ job: Job) {
        switch job {
        case let .sync(fd):
            fdatasync(fd)
        case let .syncFolder(folder):
            let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { return }
            fsync(fd)
            Glibc.close(fd)
        case let .close(fd):
            Glibc.close(fd)
        }
    }
}
