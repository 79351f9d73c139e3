import Foundation
import Fuzzing

/// Request lines for fuzzing the control socket: docs/control-socket.md's requests, mutated in their structure
/// (values of every JSON type, huge numbers, deep nesting, missing and unknown fields and ops) and in
/// their bytes (flipped bits, invalid UTF-8, NULs, truncation), and lines of random bytes.
///
/// Each line comes from its own ``FuzzRNG``, seeded from the run's seed and the line's number, so one
/// line is reproduced with `FUZZ_SEED=<seed> FUZZ_ONLY=<number>`. A line never holds a newline, never
/// is blank, and stays under the daemon's 64 KiB limit: every line must get exactly one reply.
struct ControlLineFuzzer {
    /// The requests of docs/control-socket.md's table, as `key: raw JSON value` pairs.
    static let requests: [[(String, String)]] = [
        [("id", "1"), ("op", #""status""#)],
        [("id", "2"), ("op", #""begin""#), ("class", #""short""#), ("app", #""espeak""#),
         ("properties", #"{"media.role":"assistant"}"#)],
        [("id", "3"), ("op", #""end""#), ("token", #""hook-1-1""#)],
        [("id", "4"), ("op", #""claim""#), ("app", #""radio""#), ("pid", "4242")],
        [("id", "5"), ("op", #""playback""#), ("status", #""Paused""#)],
        [("id", "6"), ("op", #""subscribe""#), ("events", #"["stream","now-playing","decision","player"]"#)],
    ]
    static let keys = ["id", "op", "class", "app", "properties", "token", "pid", "status", "events", "x", "", "ID", "op "]
    static let names = [#""status""#, #""begin""#, #""end""#, #""claim""#, #""playback""#, #""subscribe""#, #""short""#,
                        #""primary""#, #""call""#, #""nope""#, #""Playing""#, #""paused""#, #""hook-1-1""#, #""claim-1""#,
                        #""stream""#, #""Status""#, #""""#, #"" status""#, #""\u0000""#, #""st\u0000atus""#, #""é""#,
                        #""\ud800""#, #""\udfff\ud800""#, #""\\""#, #""\/""#, #""𝄞""#, #""\u202e""#]
    static let numbers = ["0", "-0", "-1", "1.5", "1e400", "-1e400", "1e-400", "9007199254740993", "9223372036854775807",
                          "9223372036854775808", "-9223372036854775809", "18446744073709551616", "2147483648", "-2147483649",
                          "123456789012345678901234567890", "0.1e1", "1E2", "4294967296"]
    static let others = ["true", "false", "null", "[]", "{}", #"[1,"a",null]"#, #"{"a":{}}"#, #"{"media.role":1}"#,
                         #"{"media.role":null}"#, #"["stream","stream"]"#, #"["nope"]"#, #"[[]]"#]

    var rng: FuzzRNG

    init(run: UInt64, index: Int) {
        rng = FuzzRNG(seed: FuzzRNG.inputSeed(run: run, index: index))
    }

    /// The line, and what was done to make it (for the failure report).
    mutating func line() -> (bytes: [UInt8], log: [String]) {
        var log: [String] = []
        var bytes: [UInt8]
        switch int(100) {
        case 0..<5:
            bytes = Self.render(pick(Self.requests))
            log.append("a README request, unchanged")
        case 5..<15:
            bytes = (0..<(1 + int(200))).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            log.append("\(bytes.count) random bytes")
        default:
            var pairs = pick(Self.requests)
            for _ in 0..<(1 + int(3)) { mutate(&pairs, log: &log) }
            bytes = Self.render(pairs)
            if int(100) < 45 { for _ in 0..<(1 + int(3)) { mutate(&bytes, log: &log) } }
        }
        bytes = bytes.map { $0 == UInt8(ascii: "\n") ? UInt8(ascii: " ") : $0 }
        if bytes.count > 60_000 { bytes.removeSubrange(60_000...) }
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { bytes.insert(UInt8(ascii: "x"), at: 0) }
        return (bytes, log)
    }

    // MARK: - Structure

    private mutating func mutate(_ pairs: inout [(String, String)], log: inout [String]) {
        switch int(6) {
        case 0 where !pairs.isEmpty:
            let at = int(pairs.count)
            log.append("drop \(pairs[at].0)")
            pairs.remove(at: at)
        case 1:
            let key = pick(Self.keys)
            pairs.append((key, value()))
            log.append("add \(key)")
        case 2 where !pairs.isEmpty:
            pairs.append(pick(pairs))
            log.append("duplicate a key")
        default:
            guard !pairs.isEmpty else { return }
            let at = int(pairs.count)
            pairs[at].1 = value()
            log.append("\(pairs[at].0) := \(pairs[at].1.prefix(40))\(pairs[at].1.count > 40 ? "…(\(pairs[at].1.utf8.count) bytes)" : "")")
        }
    }

    /// A raw JSON value (or a broken one): of any type, huge, deeply nested or long.
    private mutating func value() -> String {
        switch int(10) {
        case 0, 1: return pick(Self.names)
        case 2, 3: return pick(Self.numbers)
        case 4, 5: return pick(Self.others)
        case 6:
            let depth = pick([10, 100, 1_000, 10_000, 29_000])
            return pick([String(repeating: "[", count: depth) + String(repeating: "]", count: depth),
                         String(repeating: #"{"a":"#, count: depth / 5) + "1" + String(repeating: "}", count: depth / 5),
                         String(repeating: "[", count: depth)])
        case 7:
            let length = pick([100, 5_000, 40_000])
            return "\"" + String(repeating: pick(["a", "é", "\\u00e9", "\\\"", "\\u0000"]), count: length / 6) + "\""
        case 8: return "\"" + String(repeating: "9", count: pick([20, 400, 5_000])) + "\""
        default: return String(repeating: "9", count: pick([20, 400, 5_000]))
        }
    }

    static func render(_ pairs: [(String, String)]) -> [UInt8] {
        Array(("{" + pairs.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}").utf8)
    }

    // MARK: - Bytes

    static let tokens: [[UInt8]] = ["{", "}", "[", "]", ":", ",", "\"", "\\", "\\u", "\\ud800", "\r", "\t", "null"].map { Array($0.utf8) }
        + [[0], [0xFF], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0x80], [0xEF, 0xBB, 0xBF]]

    private mutating func mutate(_ bytes: inout [UInt8], log: inout [String]) {
        let position = int(bytes.count + 1)
        switch int(5) {
        case 0 where !bytes.isEmpty:
            let at = int(bytes.count), bit = int(8)
            bytes[at] ^= UInt8(1 << bit)
            log.append("flip bit \(bit) at \(at)")
        case 1:
            let token = pick(Self.tokens)
            bytes.insert(contentsOf: token, at: position)
            log.append("insert \(token) at \(position)")
        case 2 where !bytes.isEmpty:
            let start = int(bytes.count), length = 1 + int(min(16, bytes.count - start))
            bytes.removeSubrange(start..<min(bytes.count, start + length))
            log.append("delete \(length) bytes at \(start)")
        case 3:
            bytes.removeSubrange(position...)
            log.append("truncate at \(position)")
        default:
            let at = min(position, max(0, bytes.count - 1))
            guard at < bytes.count else { return }
            bytes[at] = UInt8(truncatingIfNeeded: rng.next())
            log.append("byte at \(at)")
        }
    }

    private mutating func int(_ upper: Int) -> Int { upper <= 0 ? 0 : Int(rng.next() % UInt64(upper)) }
    private mutating func pick<T>(_ items: [T]) -> T { items[int(items.count)] }
}
