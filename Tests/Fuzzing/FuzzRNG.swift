import AudioPolicy
/// The fuzzers' random generator: ``SplitMix64``, with every input seeded on its own from the run's
/// seed and the input's number, so one failing input is reproduced from two numbers
/// (`FUZZ_SEED=<run seed> FUZZ_ONLY=<input number>`) without replaying the inputs before it.
public struct FuzzRNG: RandomNumberGenerator {
    private var base: SplitMix64
    public init(seed: UInt64) { base = SplitMix64(seed: seed) }
    public mutating func next() -> UInt64 { base.next() }

    /// The seed of input `index` of the run seeded `run`.
    public static func inputSeed(run: UInt64, index: Int) -> UInt64 {
        var mixer = FuzzRNG(seed: run ^ (UInt64(truncatingIfNeeded: index) &* 0xD6E8_FEB8_6659_FD93))
        return mixer.next()
    }
}
