import FoundationEssentials
import Glibc

/// A volume level as a linear amplitude factor (1 = unchanged), written in policies as `"-14 dB"` or `0.2`.
public struct Level: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The quietest level a ramp interpolates through; below it counts as silence.
    public static let floorDecibels = -60.0

    public var linear: Double
    public init(linear: Double) { self.linear = linear }
    public init(decibels: Double) { self.linear = pow(10, decibels / 20) }

    public static let unity = Level(linear: 1)
    public static let silence = Level(linear: 0)

    public var decibels: Double { linear <= 0 ? -.infinity : 20 * log10(linear) }
    public static func < (lhs: Level, rhs: Level) -> Bool { lhs.linear < rhs.linear }
    public var description: String {
        // Plain arithmetic rather than String(format:): logs describe every duck, 200 at a time.
        linear <= 0 ? "silence" : "\((decibels * 10).rounded() / 10) dB (\((linear * 1000).rounded() / 1000))"
    }
}
