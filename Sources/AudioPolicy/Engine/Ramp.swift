import FoundationEssentials
import Glibc

/// A policy factor moving from one level to another over time, linear in decibels.
///
/// The engine keeps one per stream to know the factor at any instant (fixtures check it); the shell
/// steps the same ramp with its timer, so both agree on every value.
public struct Ramp: Hashable, Sendable {
    public var from: Double
    public var to: Double
    public var start: Milliseconds
    public var duration: Milliseconds

    public init(from: Double, to: Double, start: Milliseconds, duration: Milliseconds) {
        self.from = from
        self.to = to
        self.start = start
        self.duration = max(0, duration)
    }

    /// A ramp that has arrived: the factor is `value` from now on.
    public static func steady(_ value: Double) -> Ramp { Ramp(from: value, to: value, start: 0, duration: 0) }

    public var end: Milliseconds { start + duration }
    public var isSteady: Bool { from == to || duration == 0 }

    /// The factor at `time`, in milliseconds (fractional times let the shell step finer than 1 ms).
    public func value(at time: Double) -> Double {
        if duration == 0 || time >= Double(end) { return to }
        if time <= Double(start) { return from }
        let fraction = (time - Double(start)) / Double(duration)
        let fromDB = Self.decibels(from), toDB = Self.decibels(to)
        return pow(10, (fromDB + (toDB - fromDB) * fraction) / 20)
    }

    public func value(at time: Milliseconds) -> Double { value(at: Double(time)) }

    private static func decibels(_ linear: Double) -> Double {
        linear <= 0 ? Level.floorDecibels : max(Level.floorDecibels, 20 * log10(linear))
    }
}
