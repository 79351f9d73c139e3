import AudioPolicy
/// The soak's source of chance: SplitMix64, seeded, so a run that found something can be replayed with
/// its `--seed` (as far as the server's and the daemon's own timing allow).
public struct SoakRandom: RandomNumberGenerator {
    private var base: SplitMix64

    public init(seed: UInt64) {
        base = SplitMix64(seed: seed)
    }

    public mutating func next() -> UInt64 { base.next() }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool {
        Double.random(in: 0..<1, using: &self) < p
    }

    /// Microseconds for a wait of `seconds`, drawn uniformly from half to one and a half times it:
    /// events that come about that often, but never in lock-step.
    public mutating func around(seconds: Double) -> UInt64 {
        UInt64(Double.random(in: 0.5...1.5, using: &self) * seconds * 1_000_000)
    }

    /// Microseconds until the next event of a Poisson process with `perSecond` events a second; a rate
    /// of 0 (`--user-changes 0`) is a wait that never ends (still far from overflowing when added to now).
    public mutating func exponential(perSecond: Double) -> UInt64 {
        let u = Double.random(in: Double.ulpOfOne..<1, using: &self)
        guard perSecond > 0 else { return UInt64.max / 4 }
        return UInt64(-log(u) / perSecond * 1_000_000)
    }
}

import FoundationEssentials
import Glibc
