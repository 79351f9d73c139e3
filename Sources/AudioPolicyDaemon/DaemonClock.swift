import AudioPolicy
import EventLoop

/// The daemon's clock: the engine counts milliseconds from the daemon's start on the monotonic clock.
///
/// One value shared by every part, so a ramp step, an engine deadline and a status row agree on `now`.
struct DaemonClock {
    /// Monotonic µs at start.
    let epoch = MainLoop.monotonicMicroseconds()

    /// Milliseconds since start, fractional, for ramp steps.
    var nowPrecise: Double { Double(MainLoop.monotonicMicroseconds() &- epoch) / 1000 }
    /// Milliseconds since start: the engine's `now`.
    var now: Milliseconds { Milliseconds(nowPrecise) }

    /// The monotonic µs of `milliseconds` since start, for a timer.
    func monotonic(at milliseconds: Double) -> UInt64 { epoch &+ UInt64(max(0, milliseconds) * 1000) }
}
