import Glibc

/// The daemon's place in the CPU queue.
///
/// Its one thread is on the way from a new stream to the others' duck: on a busy machine a thread at
/// the default priority waits behind everything else that is runnable (measured on 2 cores with the
/// server's realtime thread at work: waits of 1–2 ms in the middle of a decision). The sound server's
/// own main thread asks for nice -11 for the same reason (PulseAudio's `high-priority`, PipeWire's
/// `nice.level`), so the daemon asks for the same, when the system allows it (root, `CAP_SYS_NICE`, or
/// an `RLIMIT_NICE` that reaches it, e.g. `@audio - nice -11` in `/etc/security/limits.conf`), and
/// otherwise runs where it was started. It never lowers a priority it was given.
public enum ProcessPriority {
    /// The level asked for: the sound servers' own main-thread level.
    public static let desiredNice: Int32 = -11

    /// What ``raise(to:)`` did.
    public enum Outcome: Equatable, Sendable {
        /// The calling thread now runs at `nice`.
        case raised(nice: Int32)
        /// It already ran at `nice`, as high as asked for or higher.
        case alreadyHigh(nice: Int32)
        /// Not allowed: it stays at `nice`; `reason` is the system's word.
        case refused(nice: Int32, reason: String)
    }

    /// The calling thread's nice level (on Linux a priority belongs to a thread; threads started later
    /// inherit it).
    public static var currentNice: Int32 {
        errno = 0
        let value = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        return errno == 0 ? value : 0
    }

    /// Asks for `nice` for the calling thread (and the threads it starts later).
    @discardableResult
    public static func raise(to nice: Int32 = desiredNice) -> Outcome {
        let before = currentNice
        guard before > nice else { return .alreadyHigh(nice: before) }
        guard setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice) == 0 else {
            return .refused(nice: before, reason: String(cString: strerror(errno)))
        }
        return .raised(nice: currentNice)
    }
}
