import AudioPolicy
import FoundationGaps

/// The daemon's record of every stream it has changed and not yet put back, mirrored to a
/// ``JournalStore`` whenever the set changes (a first duck, a mute, a pause, the user's own volume
/// changing under a duck, a restore that arrived) — never on a ramp step.
///
/// Entries left by an earlier run, or by a server that went away, are *recovering*: the daemon has
/// sent the writes that undo them and keeps them on disk until the server has answered.
struct Journal {
    /// No store: a daemon that keeps no journal; everything else still works.
    let store: JournalStore?
    /// Streams changed by this run, on the server we are connected to now.
    private(set) var entries: [UInt32: JournalEntry] = [:]
    /// The order ``entries`` last changed in what the server may have saved (``JournalOrder``): the
    /// file holds them, and recovery takes them, in it.
    private var order = JournalOrder()
    /// Entries being undone (from an earlier run or an earlier server), kept until acknowledged.
    private(set) var recovering: [JournalEntry] = []
    /// The last error writing the file, so it is reported once, not on every change.
    private(set) var lastFailure: String?
    /// The last error writing the durable copy (in the background), likewise.
    private var lastCopyFailure: String?
    /// Inside ``beginBatch()``/``endBatch()``: changes are saved once, at the end.
    private var batching = false
    private var unsaved = false

    init(store: JournalStore?) {
        self.store = store
    }

    var isEmpty: Bool { entries.isEmpty && recovering.isEmpty }

    subscript(index: UInt32) -> JournalEntry? { entries[index] }

    /// Records `entry` (replacing the stream's earlier one); writes the file if anything changed.
    /// Returns a failure message the first time writing fails.
    mutating func record(_ entry: JournalEntry) -> String? {
        let old = entries[entry.sinkInput]
        guard old != entry else { return nil }
        order.recorded(entry.sinkInput, entry.written, over: old?.written)
        entries[entry.sinkInput] = entry
        return save()
    }

    /// Forgets the stream's entry (restored, or gone and repaired); writes the file if it had one.
    mutating func remove(_ index: UInt32) -> String? {
        guard entries.removeValue(forKey: index) != nil else { return nil }
        order.removed(index)
        return save()
    }

    /// Moves every entry to ``recovering`` (after the server restarted, or at start) and returns them.
    mutating func beginRecovery(adding earlier: [JournalEntry] = []) -> [JournalEntry] {
        recovering += order.sorted(entries) + earlier
        entries = [:]
        order.removeAll()
        return recovering
    }

    /// The server took the writes that undo ``recovering``: they are done with.
    mutating func endRecovery(_ done: [JournalEntry]) -> String? {
        let before = recovering.count
        recovering.removeAll { done.contains($0) }
        return recovering.count == before ? nil : save()
    }

    /// Everything not yet put back, as the file holds it: the recovering entries, then this run's
    /// (one index may appear twice when a restarted server gave it to a new stream).
    var all: [JournalEntry] {
        var merged = recovering
        for entry in order.sorted(entries) where !merged.contains(entry) {
            merged.append(entry)
        }
        return merged
    }

    /// Holds saves until ``endBatch()``: a prompt that ducks 200 streams writes the file once, not
    /// 200 times. The caller sends no write to the server before ending the batch.
    mutating func beginBatch() {
        batching = true
    }

    /// Saves what changed since ``beginBatch()``, if anything.
    mutating func endBatch() -> String? {
        batching = false
        guard unsaved else { return nil }
        return save()
    }

    private mutating func save() -> String? {
        if batching {
            unsaved = true
            return nil
        }
        unsaved = false
        let entries = all
        return attempt { try $0.save(entries) }
    }

    /// Compacts the file if it grew long (``JournalStore/compactIfDue()``): call once the change's
    /// requests have left. Returns a failure message as ``record(_:)`` does.
    mutating func compactIfDue() -> String? {
        guard store?.compactionDue == true else { return nil }
        return attempt { try $0.compactIfDue() }
    }

    /// What became of the durable copy, when it changed.
    enum DurableCopyChange: Equatable {
        /// It could not be written: the message to log.
        case failed(String)
        /// It was written again after failing.
        case writtenAgain
    }

    /// The sync thread signalled that writing the durable copy failed, or works again: tells the
    /// first failure (not each one after it) and the first copy written after one.
    mutating func durableCopyChecked() -> DurableCopyChange? {
        guard let store else { return nil }
        let failure = store.durableCopyFailure()
        defer { lastCopyFailure = failure }
        switch (lastCopyFailure, failure) {
        case (nil, let failure?):
            return .failed("cannot write the journal's durable copy: \(failure) (a crash is still covered, a power cut is not)")
        case (_?, nil):
            return .writtenAgain
        default:
            return nil
        }
    }

    private mutating func attempt(_ body: (JournalStore) throws -> Void) -> String? {
        guard let store else { return nil }
        let message: String
        do {
            try body(store)
            lastFailure = nil
            return nil
        } catch {
            message = "cannot write the journal \(store.path): \(errorMessage(error))"
        }
        defer { lastFailure = message }
        return lastFailure == message ? nil : message
    }
}
