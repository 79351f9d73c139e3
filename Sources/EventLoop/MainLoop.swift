import CMainLoop
import CPulse
import Glibc

/// The daemon's only event loop: libpulse's main-loop interface (`pa_mainloop_api`) served by a loop of
/// our own over `ppoll` (CMainLoop), which keeps `pa_mainloop`'s semantics.
///
/// Our own, not libpulse's `pa_mainloop`, so that the daemon in ALSA mode never loads libpulse and the
/// libraries it brings (about 2.9 MiB resident): the pulse backend runs its contexts on this loop's
/// `api`, a struct of function pointers that needs nothing of libpulse's code.
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
    /// The loop this object owns.
    let handle: OpaquePointer

    /// The loop's abstract API, which libpulse contexts and event sources use.
    public let api: UnsafeMutablePointer<pa_mainloop_api>
    /// The thread that last ran the loop: loop-only code checks it runs there.
    private var thread: pthread_t?

    /// Creates a loop; it does nothing until ``run()`` or ``iterate(blocking:)``.
    public init() {
        guard let handle = apd_loop_new() else { fatalError("apd_loop_new failed: out of memory") }
        self.handle = handle
        self.api = apd_loop_api(handle).assumingMemoryBound(to: pa_mainloop_api.self)
    }

    deinit {
        apd_loop_free(handle)
    }

    // MARK: - Running

    /// Runs the loop until ``quit(_:)`` is called and returns the code given there.
    ///
    /// A loop that has quit cannot run again: it stays in its "quit" state,
    /// as libpulse's does. Returns -1 if polling failed.
    @discardableResult
    public func run() -> Int32 {
        var code: Int32 = 0
        thread = pthread_self()
        // apd_loop_run returns 1 after quit (with the code in `code`) and
        // a negative value when polling failed.
        return apd_loop_run(handle, &code) < 0 ? -1 : code
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
        return apd_loop_iterate(handle, blocking ? 1 : 0, &code) >= 0
    }

    /// Asks the loop to return from ``run()`` with `code` once the current
    /// callback returns.
    public func quit(_ code: Int32 = 0) {
        apd_loop_quit(handle, code)
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
        apd_monotonic_usec()
    }
}
