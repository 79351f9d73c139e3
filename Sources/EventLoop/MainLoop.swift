import CPulse
import Glibc

/// The daemon's only event loop: a non-threaded libpulse `pa_mainloop`.
///
/// Every callback, timer, socket watch and signal of the daemon runs on this
/// loop, one at a time, on the thread that calls ``run()``. Nothing here takes
/// a lock: the wrappers that hang off the loop (``Timer``, ``IOWatch``,
/// ``SignalHandler``, ``PulseConnection``) must only be touched from that
/// thread, which is why none of them is `Sendable`.
///
/// Each of those wrappers keeps the loop alive, so the loop is freed only
/// after the last event source that was created on it.
public final class MainLoop {
    /// The `pa_mainloop` this object owns.
    let handle: OpaquePointer

    /// The loop's abstract API, which libpulse contexts and event sources use.
    public let api: UnsafeMutablePointer<pa_mainloop_api>
    /// The thread that last ran the loop: loop-only code checks it runs there.
    private var thread: pthread_t?

    /// Creates a loop; it does nothing until ``run()`` or ``iterate(blocking:)``.
    public init() {
        // pa_mainloop_new fails only when it cannot create its wake-up pipe,
        // i.e. when the process is out of file descriptors.
        guard let handle = pa_mainloop_new() else {
            fatalError("pa_mainloop_new failed: out of file descriptors?")
        }
        self.handle = handle
        self.api = pa_mainloop_get_api(handle)
    }

    deinit {
        pa_mainloop_free(handle)
    }

    // MARK: - Running

    /// Runs the loop until ``quit(_:)`` is called and returns the code given there.
    ///
    /// A loop that has quit cannot run again: libpulse keeps it in its
    /// "quit" state. Returns -1 if polling failed.
    @discardableResult
    public func run() -> Int32 {
        var code: Int32 = 0
        thread = pthread_self()
        // pa_mainloop_run returns 1 after quit (with the code in `code`) and
        // a negative value when polling failed.
        return pa_mainloop_run(handle, &code) < 0 ? -1 : code
    }

    /// Runs one iteration: waits (if `blocking`) for the next event, then
    /// dispatches whatever is due.
    ///
    /// Returns `false` once the loop has quit or failed. Tests use it to run
    /// the loop until a condition holds, with a ``Timer`` as the deadline.
    @discardableResult
    public func iterate(blocking: Bool = true) -> Bool {
        var code: Int32 = 0
        thread = pthread_self()
        return pa_mainloop_iterate(handle, blocking ? 1 : 0, &code) >= 0
    }

    /// Asks the loop to return from ``run()`` with `code` once the current
    /// callback returns.
    public func quit(_ code: Int32 = 0) {
        pa_mainloop_quit(handle, code)
    }

    // MARK: - Its thread

    /// Whether the caller runs on the loop's thread (or the loop has not run yet: setting up happens
    /// before, on the thread that will run it).
    public var isOnLoopThread: Bool {
        guard let thread else { return true }
        return pthread_equal(thread, pthread_self()) != 0
    }

    /// Stops a debug build where loop-only code (the daemon's parts, which take no lock) is called from
    /// another thread. Costs nothing in a release build.
    public func assertOnLoopThread(file: StaticString = #fileID, line: UInt = #line) {
        assert(isOnLoopThread, "called off the main loop's thread", file: file, line: line)
    }

    // MARK: - Clock

    /// Microseconds on the monotonic clock that the loop's timers use.
    public static func monotonicMicroseconds() -> UInt64 {
        pa_rtclock_now()
    }
}
