import CMainLoop
import CPulse
import Glibc

extension MainLoop {
    /// A one-shot, re-armable timer on the loop's monotonic clock.
    ///
    /// A timer that is not scheduled is disabled in the loop and causes no
    /// wake-ups at all; the ramp stepper, for instance, keeps one timer and
    /// schedules it only while a ramp is under way.
    ///
    /// ```swift
    /// let deadline = MainLoop.Timer(loop: loop) { print("too late") }
    /// deadline.schedule(after: 2_000_000)   // 2 s
    /// deadline.cancel()
    /// ```
    public final class Timer {
        /// What the C callback reaches: the action and the armed deadline.
        /// The timer owns it; the loop only borrows a pointer to it.
        private final class Box {
            let fire: () -> Void
            var deadline: UInt64?

            init(fire: @escaping () -> Void) {
                self.fire = fire
            }
        }

        private let loop: MainLoop
        private let box: Box
        private let event: OpaquePointer

        /// When the timer will fire, in ``MainLoop/monotonicMicroseconds()``
        /// time; `nil` when it is not scheduled.
        public var deadline: UInt64? { box.deadline }

        /// Whether the timer is armed.
        public var isScheduled: Bool { box.deadline != nil }

        /// Creates an unscheduled timer that runs `fire` each time it expires.
        public init(loop: MainLoop, fire: @escaping () -> Void) {
            self.loop = loop
            self.box = Box(fire: fire)
            // A NULL timeval creates the event disabled.
            guard
                let event = loop.api.pointee.time_new(
                    loop.api, nil, Self.callback, Unmanaged.passUnretained(box).toOpaque())
            else {
                fatalError("pa_mainloop_api.time_new returned NULL")
            }
            self.event = event
        }

        deinit {
            // After time_free the loop never calls back, so the box may go.
            loop.api.pointee.time_free(event)
        }

        /// Arms the timer to fire `microseconds` from now, replacing any
        /// earlier deadline.
        public func schedule(after microseconds: UInt64) {
            schedule(at: MainLoop.monotonicMicroseconds() &+ microseconds)
        }

        /// Arms the timer to fire at `monotonicTime` (``MainLoop/monotonicMicroseconds()``
        /// time), replacing any earlier deadline. A time in the past fires on
        /// the next iteration.
        public func schedule(at monotonicTime: UInt64) {
            var tv = Self.monotonicTimeval(monotonicTime)
            box.deadline = monotonicTime
            loop.api.pointee.time_restart(event, &tv)
        }

        /// Disarms the timer; it will not fire until scheduled again.
        public func cancel() {
            guard box.deadline != nil else { return }
            box.deadline = nil
            loop.api.pointee.time_restart(event, nil)
        }

        // MARK: - C side

        private static let callback: pa_time_event_cb_t = { _, _, _, userdata in
            guard let userdata else { return }
            // The loop has already disabled the event (one-shot); keep the box
            // alive through `fire` even if `fire` drops the last timer reference.
            let box = Unmanaged<Box>.fromOpaque(userdata).takeUnretainedValue()
            box.deadline = nil
            box.fire()
        }

        /// Bit that marks a `timeval` as monotonic time for libpulse main
        /// loops (`PA_TIMEVAL_RTCLOCK` in pulsecore/core-rtclock.h).
        ///
        /// A plain `timeval` passed to `time_new`/`time_restart` is taken as
        /// wall-clock time and converted, so timers would jump with the
        /// system clock. `pa_context_rttime_new` sets this bit through the
        /// internal `pa_timeval_rtstore`, which public headers do not export;
        /// every libpulse main loop (plain, threaded, glib) honours it.
        private static let rtclockFlag = Int(APD_TIMEVAL_RTCLOCK)

        private static func monotonicTimeval(_ usec: UInt64) -> timeval {
            timeval(tv_sec: time_t(usec / 1_000_000), tv_usec: suseconds_t(usec % 1_000_000) | rtclockFlag)
        }
    }
}
