@testable import ALSABackend
import AudioPolicy
import Foundation
import Testing

/// The ALSA plugin's wire protocol on the daemon's side, against the byte layout of
/// `audiopolicy_alsa_protocol.h`: every message at its offsets, every refusal the header asks for, and
/// random bytes thrown at the decoder.
@Suite("ALSA plugin wire protocol")
struct PluginMessageTests {
    /// Little-endian bytes of a value, as the C side lays them out.
    private func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }

    private func padded(_ string: String, _ count: Int) -> [UInt8] {
        Array(string.utf8) + Array(repeating: 0, count: count - string.utf8.count)
    }

    /// Each message, and its packet built by hand field by field from the header's offsets.
    private var layouts: [(PluginMessage, [UInt8])] {
        let hello = PluginMessage.Hello(pid: 0x0102_0304, direction: .capture, binary: "aplay", classHint: "navigation",
                                        application: "Maps", pcmName: "audiopolicy_navigation", features: .ramp)
        return [
            (.hello(hello), [1, 1] + le(UInt16(204)) + le(UInt32(0x0102_0304)) + [1, 1, 0, 0] + padded("aplay", 32)
                + padded("navigation", 32) + padded("Maps", 64) + padded("audiopolicy_navigation", 64)),
            (.format(.init(rate: 48000, channels: 2, sampleFormat: .float, bufferFrames: 4096, periodFrames: 1024)),
             [1, 2] + le(UInt16(20)) + le(UInt32(48000)) + le(UInt16(2)) + le(UInt16(3)) + le(UInt32(4096)) + le(UInt32(1024))),
            (.state(.init(state: .running, muted: true, gain: 0.25, target: 0.5, position: 0x1_0000_0002)),
             [1, 3] + le(UInt16(24)) + [3, 1, 0, 0] + le(Float(0.25).bitPattern) + le(Float(0.5).bitPattern)
                + le(UInt64(0x1_0000_0002))),
            (.peak(.init(peakIn: 0.5, peakOut: 0.05, frames: 4800, position: 96000)),
             [1, 4] + le(UInt16(24)) + le(Float(0.5).bitPattern) + le(Float(0.05).bitPattern) + le(UInt32(4800))
                + le(UInt64(96000))),
            (.setGain(gain: 0.1, rampMilliseconds: 15), [1, 16] + le(UInt16(12)) + le(Float(0.1).bitPattern) + le(UInt32(15))),
            (.mute(true, fadeMilliseconds: 20), [1, 17] + le(UInt16(12)) + [1, 0, 0, 0] + le(UInt32(20))),
            (.meter(intervalMilliseconds: 150), [1, 18] + le(UInt16(8)) + le(UInt32(150))),
            (.query, [1, 19] + le(UInt16(4))),
            (.ramp(gain: 0.3, rampMilliseconds: 400, floorDecibels: -60),
             [1, 20] + le(UInt16(16)) + le(Float(0.3).bitPattern) + le(UInt32(400)) + le(Float(-60).bitPattern)),
        ]
    }

    @Test("every message encodes to the header's byte layout and decodes back")
    func layout() {
        for (message, bytes) in layouts {
            #expect(message.encoded == bytes, "\(message)")
            #expect(PluginMessage(decoding: bytes) == message, "\(message)")
            #expect(PluginMessage.size(ofType: bytes[1]) == bytes.count)
        }
        // The sizes of the header's _Static_asserts.
        #expect(layouts.map(\.1.count) == [204, 20, 24, 24, 12, 12, 8, 4, 16])
        #expect(PluginMessage.largestSize == 204)
    }

    @Test("a string is cut to leave its NUL; a cut multi-byte sequence is accepted; garbage after the NUL is ignored")
    func strings() {
        let long = String(repeating: "é", count: 40)   // 80 bytes: cut at 31, in the middle of a character
        let message = PluginMessage.hello(.init(pid: 1, direction: .playback, binary: long, classHint: "", application: "",
                                                pcmName: "default"))
        var bytes = message.encoded
        #expect(bytes[12 + 31] == 0)
        guard case let .hello(hello)? = PluginMessage(decoding: bytes) else {
            Issue.record("refused")
            return
        }
        #expect(hello.binary.hasPrefix(String(repeating: "é", count: 15)))
        bytes[140 + 8] = 0x41   // after "default" and its NUL
        guard case let .hello(again)? = PluginMessage(decoding: bytes) else {
            Issue.record("refused")
            return
        }
        #expect(again.pcmName == "default")
    }

    @Test("what the header says a receiver ignores is refused")
    func refusals() {
        let (hello, state, peak, gain, mute) = (layouts[0].1, layouts[2].1, layouts[3].1, layouts[4].1, layouts[5].1)
        let ramp = layouts[8].1
        func with(_ bytes: [UInt8], _ offset: Int, _ values: [UInt8]) -> [UInt8] {
            var changed = bytes
            changed.replaceSubrange(offset..<(offset + values.count), with: values)
            return changed
        }
        let refused: [(String, [UInt8])] = [
            ("empty", []),
            ("a header only", [1, 3, 4, 0]),
            ("version 2", with(state, 0, [2])),
            ("version 0", with(state, 0, [0])),
            ("unknown type 5", with(state, 1, [5])),
            ("unknown type 21", with(state, 1, [21])),
            ("size field off by one", with(state, 2, le(UInt16(25)))),
            ("one byte short", Array(state.dropLast())),
            ("one byte long", state + [0]),
            ("direction 2", with(hello, 8, [2])),
            ("state 5", with(state, 4, [5])),
            ("muted 2", with(state, 5, [2])),
            ("state gain NaN", with(state, 8, le(Float.nan.bitPattern))),
            ("state target above 1", with(state, 12, le(Float(1.5).bitPattern))),
            ("negative peak", with(peak, 4, le(Float(-0.1).bitPattern))),
            ("infinite peak", with(peak, 8, le(Float.infinity.bitPattern))),
            ("format 4", with(layouts[1].1, 10, le(UInt16(4)))),
            ("rate 0", with(layouts[1].1, 4, le(UInt32(0)))),
            ("gain NaN", with(gain, 4, le(Float.nan.bitPattern))),
            ("gain -0.5", with(gain, 4, le(Float(-0.5).bitPattern))),
            ("gain 2", with(gain, 4, le(Float(2).bitPattern))),
            ("mute 3", with(mute, 4, [3])),
            ("ramp gain 2", with(ramp, 4, le(Float(2).bitPattern))),
            ("ramp floor NaN", with(ramp, 12, le(Float.nan.bitPattern))),
            ("ramp floor 0", with(ramp, 12, le(Float(0).bitPattern))),
            ("ramp floor -201", with(ramp, 12, le(Float(-201).bitPattern))),
        ]
        for (name, bytes) in refused {
            #expect(PluginMessage(decoding: bytes) == nil, "\(name)")
        }
        // Control: the unchanged packets decode.
        for bytes in [hello, state, peak, gain, mute, ramp, with(ramp, 12, le(Float(-200).bitPattern))] { #expect(PluginMessage(decoding: bytes) != nil) }
    }

    @Test("random bytes and mutated packets: never a crash, and what is accepted is a well-formed message")
    func fuzz() {
        var random = SystemRandomNumberGenerator()
        let seed = ProcessInfo.processInfo.environment["FUZZ_SEED"].flatMap { UInt64($0) } ?? random.next()
        var rng = SplitMix64(seed: seed)
        let valid = layouts.map(\.1)
        var accepted = 0
        for round in 0..<100_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<rng.below(260)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                if round % 4 == 0, bytes.count >= 4 { bytes[0] = 1 }   // past the version check more often
            } else {
                bytes = valid[rng.below(valid.count)]
                for _ in 0..<(1 + rng.below(3)) where !bytes.isEmpty {
                    bytes[rng.below(bytes.count)] ^= UInt8(truncatingIfNeeded: 1 << rng.below(8))
                }
            }
            guard let message = PluginMessage(decoding: bytes) else { continue }
            accepted += 1
            // Accepted: the right size for its type, and its own encoding decodes to the same message.
            #expect(bytes.count == PluginMessage.size(ofType: bytes[1]), "seed \(seed) round \(round)")
            #expect(PluginMessage(decoding: message.encoded) == message, "seed \(seed) round \(round)")
        }
        // Control: the accepting path is reached, not only the refusals.
        #expect(accepted > 1000, "seed \(seed): only \(accepted) accepted")
    }
}

extension SplitMix64 {
    fileprivate mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
