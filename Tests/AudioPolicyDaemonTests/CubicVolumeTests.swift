@testable import AudioPolicy
import CPulse
import Testing

/// The cubic volume scale computed in Swift equals libpulse's own, bit for bit: the daemon scales every
/// volume with it, and the server compares what we write with what it keeps.
@Suite struct CubicVolumeTests {
    @Test func linearOfEveryRawVolumeUpTo300Percent() {
        for raw in ChannelVolumes.Raw(0)...(3 * ChannelVolumes.norm) {
            let ours = CubicVolume.linear(raw), theirs = pa_sw_volume_to_linear(raw)
            guard ours == theirs else {
                Issue.record("raw \(raw): \(ours) ≠ libpulse's \(theirs)")
                return
            }
        }
    }

    @Test func rawOfLinearAmplitudes() {
        var generator = SystemRandomNumberGenerator()
        let fixed: [Double] = [-1, 0, .leastNonzeroMagnitude, 1e-12, 0.01, 0.1, 0.125, 0.5, 0.99999, 1, 1.5, 27, 1e30, .infinity]
        let random = (0..<200_000).map { _ in Double.random(in: 0...4, using: &generator) }
        for linear in fixed + random {
            let ours = CubicVolume.raw(linear: linear), theirs = pa_sw_volume_from_linear(linear)
            guard ours == theirs else {
                Issue.record("linear \(linear): \(ours) ≠ libpulse's \(theirs)")
                return
            }
        }
    }

    @Test func productsOfRawVolumes() {
        var generator = SystemRandomNumberGenerator()
        let edges: [ChannelVolumes.Raw] = [0, 1, ChannelVolumes.norm - 1, ChannelVolumes.norm, ChannelVolumes.maximum,
                                           ChannelVolumes.maximum + 1, .max]
        var pairs = edges.flatMap { a in edges.map { (a, $0) } }
        pairs += (0..<200_000).map { _ in
            (ChannelVolumes.Raw.random(in: 0...(4 * ChannelVolumes.norm), using: &generator),
             ChannelVolumes.Raw.random(in: 0...(2 * ChannelVolumes.norm), using: &generator))
        }
        for (a, b) in pairs {
            let ours = CubicVolume.multiply(a, b), theirs = pa_sw_volume_multiply(a, b)
            guard ours == theirs else {
                Issue.record("\(a) × \(b): \(ours) ≠ libpulse's \(theirs)")
                return
            }
        }
    }
}
