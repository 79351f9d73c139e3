import Foundation

/// How a fuzz run is set from the environment, the same for every fuzzer: `FUZZ_SEED` fixes the run
/// (default: a new random seed, which the tests print), `FUZZ_ONLY` runs one input number of it,
/// `FUZZ_SCALE` multiplies the input counts (default 1; e.g. 10 for a long run).
public enum FuzzSettings {
    static let environment = ProcessInfo.processInfo.environment
    /// The run's seed: `FUZZ_SEED`, else random.
    public static let seed: UInt64 = environment["FUZZ_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64.max)
    /// Only this input number (to reproduce one failure), if set.
    public static let only: Int? = environment["FUZZ_ONLY"].flatMap { Int($0) }
    /// Multiplies every input count.
    public static let scale: Double = environment["FUZZ_SCALE"].flatMap { Double($0) } ?? 1
    /// An input slower than this is reported (seconds). A stall detector, not a speed test: a debug build
    /// on two cores shared with a sound server took 1.4 s for one 3,000-deep nesting.
    public static let slow: Double = 5
    /// An input still running after this long is a hang: the watchdog aborts the process (seconds).
    public static let hang: Double = 20

    /// `base` inputs, scaled by `FUZZ_SCALE` (at least one).
    public static func count(_ base: Int) -> Int { max(1, Int((Double(base) * scale).rounded())) }
}
