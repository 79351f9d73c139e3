import AudioPolicy
import Foundation
import Fuzzing

// A seeded fuzzer for the TOML loaders (`PolicyLoader.load(text:file:)`, `FixtureLoader.load(text:file:)`).
//
// Every input is made from its own seed, derived from the run's seed and the input's number, so a
// failure is reproduced from two numbers:
//
//   FUZZ_SEED=<run seed> FUZZ_ONLY=<input number> swift test --filter Fuzz
//
// `FUZZ_SEED` fixes the run (default: a new random seed, printed); `FUZZ_SCALE` multiplies the input
// counts (default 1; e.g. 10 for a long run). A crash kills the test process: the signal handler
// installed here prints the run seed and the input it died on first. A hang is caught by a watchdog
// thread, which writes the input to a file and aborts.

// MARK: - Crash and hang reporting

/// What the fuzzer is running right now, readable from a signal handler (plain globals, no locks:
/// they are only written by the one fuzzing thread, and a handler only reads them once, to print).
nonisolated(unsafe) private var currentRunSeed: UInt64 = 0
nonisolated(unsafe) private var currentIndex: Int = -1
nonisolated(unsafe) private var currentCampaign: UInt8 = 0 // index into FuzzWatch.campaignNames
/// A copy of the current input's bytes, which the crash handler writes to ``crashFile``.
nonisolated(unsafe) private var currentBytes = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: 1 << 20)
nonisolated(unsafe) private var currentCount = 0
/// Where the crash handler leaves the input that crashed.
let crashFile: StaticString = "/tmp/fuzz-crash.toml"

enum FuzzWatch {
    static let campaignNames = ["none", "policy", "fixture", "random-policy", "random-fixture", "truncate-policy",
                                "truncate-fixture"]
    private static let lock = NSLock()
    nonisolated(unsafe) private static var started: ContinuousClock.Instant?
    nonisolated(unsafe) private static var text: String = ""
    nonisolated(unsafe) private static var installed = false

    /// Installs the crash handler and the hang watchdog (once per process).
    static func install() {
        lock.lock()
        defer { lock.unlock() }
        guard !installed else { return }
        installed = true
        for signal in [SIGSEGV, SIGILL, SIGTRAP, SIGBUS, SIGABRT, SIGFPE] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { received in
                FuzzWatch.reportCrash(received)
                _ = Glibc.signal(received, SIG_DFL)
                raise(received)
            }
            sigaction(signal, &action, nil)
        }
        Thread.detachNewThread {
            while true {
                Thread.sleep(forTimeInterval: 0.5)
                lock.lock()
                let since = started, input = text, index = currentIndex, seed = currentRunSeed
                lock.unlock()
                guard let since, ContinuousClock.now - since > .seconds(FuzzSettings.hang) else { continue }
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-hang-\(seed)-\(index).toml")
                try? Data(input.utf8).write(to: file)
                FileHandle.standardError.write(Data(("FUZZ HANG: input \(index) of run seed \(seed) ran over "
                    + "\(FuzzSettings.hang) s; written to \(file.path); reproduce with FUZZ_SEED=\(seed) "
                    + "FUZZ_ONLY=\(index)\n").utf8))
                abort()
            }
        }
    }

    /// Marks the start of input `index`; its text is kept only for the watchdog's report.
    static func begin(campaign: UInt8, seed: UInt64, index: Int, text: String) {
        lock.lock()
        let utf8 = text.utf8.count
        if utf8 > currentBytes.count {
            currentBytes.deallocate()
            currentBytes = .allocate(capacity: utf8 * 2)
        }
        _ = currentBytes.initialize(from: text.utf8)
        currentCount = utf8
        currentCampaign = campaign
        currentRunSeed = seed
        currentIndex = index
        started = .now
        Self.text = text
        lock.unlock()
    }

    static func end() {
        lock.lock()
        started = nil
        currentIndex = -1
        lock.unlock()
    }

    /// Async-signal-safe: writes the run seed and input number with write(2) only.
    fileprivate static func reportCrash(_ signal: Int32) {
        guard currentIndex >= 0 else { return }
        func put(_ text: StaticString) { _ = write(2, text.utf8Start, text.utf8CodeUnitCount) }
        func put(_ number: UInt64) {
            var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                         UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
                (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &digits) { buffer in
                var value = number, end = buffer.count
                repeat {
                    end -= 1
                    buffer[end] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                } while value > 0
                _ = write(2, buffer.baseAddress! + end, buffer.count - end)
            }
        }
        put("\nFUZZ CRASH (signal ")
        put(UInt64(signal))
        put(") in campaign #")
        put(UInt64(currentCampaign))
        put(" on input ")
        put(UInt64(currentIndex))
        put(" of run seed ")
        put(currentRunSeed)
        put(": reproduce with FUZZ_SEED=<seed> FUZZ_ONLY=<input> swift test --filter Fuzz; the input is in ")
        put(crashFile)
        put("\n")
        let fd = open(UnsafeRawPointer(crashFile.utf8Start).assumingMemoryBound(to: CChar.self),
                      O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if fd >= 0 {
            _ = write(fd, currentBytes.baseAddress, currentCount)
            close(fd)
        }
    }
}

// MARK: - Corpus

enum FuzzCorpus {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent() // Fuzz
        .deletingLastPathComponent() // AudioPolicyTests
        .deletingLastPathComponent() // Tests
        .deletingLastPathComponent()

    static func files(under folder: String) -> [(name: String, bytes: [UInt8])] {
        let base = root.appendingPathComponent(folder)
        let found = FileManager.default.enumerator(atPath: base.path)?.compactMap { $0 as? String } ?? []
        return found.filter { $0.hasSuffix(".toml") }.sorted().compactMap { relative in
            guard let data = FileManager.default.contents(atPath: base.appendingPathComponent(relative).path)
            else { return nil }
            return ("\(folder)/\(relative)", [UInt8](data))
        }
    }

    /// `policies/*.toml`, the shipped policies.
    static let policies = files(under: "policies")
    /// `Tests/Fixtures/**/*.toml`.
    static let fixtures = files(under: "Tests/Fixtures")
}

// MARK: - Mutations

/// Turns a valid file into a likely-invalid one, one or a few edits at a time.
struct Mutator {
    var rng: FuzzRNG
    /// Other files of the corpus, for splicing in their lines.
    let donors: [[UInt8]]

    static let significant: [String] = ["[", "]", "{", "}", "=", "\"", ",", "#", "\n", "'", ".", "[[", "]]",
                                        "\"\"\"", "'''", "\\", "\r", "\t", " = ", "\n[", "\n[[rule]]\n",
                                        "\n[[event]]\n", "\n[[expect]]\n", "\n[class.x]\n", "\n[defaults]\n"]
    static let numbers: [String] = ["9223372036854775807", "9223372036854775808", "-9223372036854775808",
                                    "-9223372036854775809", "99999999999999999999999999", "1e308", "1e309",
                                    "-1e309", "inf", "-inf", "nan", "+nan", "-0", "0x7fffffffffffffff",
                                    "0xffffffffffffffff", "0o777", "0b1", "1_000", "1__0", "01", "-1", "-500",
                                    "4.9e-324", "0.0", "-0.0", "1.5", "\"-1s\"", "\"1e300s\"", "\"nan dB\"",
                                    "\"-inf dB\"", "\"1e400ms\"", "\"-0 dB\"", "\"99999999999999999999ms\"",
                                    "\"0.0000001s\"", "\"-60.0000001 dB\"", "\"9e15s\"", "\"1e19 ms\""]
    static let values: [String] = ["true", "false", "[]", "{}", "[[]]", "[{}]", "{ a = 1 }", "\"\"", "''",
                                   "1979-05-27T07:32:00Z", "07:32:00", "1979-05-27", "[1, \"a\", true]",
                                   "{ \"media.role\" = 1 }", "{ a.b = \"c\" }", "[\"primary\", \"primary\"]",
                                   "\"never\"", "\"primary\"", "\"call\"", "\"mix\"", "\"short\"", "\"x\"",
                                   "{ \"media.role\" = [] }", "{ \"media.role\" = [1] }", "[[1], [2]]"]
    static let unicode: [String] = ["é", "𝄞", "\u{200B}", "\u{202E}", "\u{FEFF}", "\u{0}", "\u{FFFD}", "\u{10FFFF}",
                                    "e\u{301}", "\u{1F3B5}", "日本語", "\u{7F}", "\u{85}", "\u{2028}", "\u{1}",
                                    "\r\n", "ﬀ", "İ", "ß"]

    mutating func int(_ upper: Int) -> Int { upper <= 0 ? 0 : Int(rng.next() % UInt64(upper)) }
    mutating func chance(_ percent: Int) -> Bool { int(100) < percent }
    mutating func pick<T>(_ items: [T]) -> T { items[int(items.count)] }

    /// One to four edits of `original`; `log` names them, for the failure report.
    mutating func mutate(_ original: [UInt8], log: inout [String]) -> [UInt8] {
        var bytes = original
        for _ in 0..<(1 + int(4)) {
            bytes = edit(bytes, log: &log)
        }
        return bytes
    }

    private mutating func edit(_ input: [UInt8], log: inout [String]) -> [UInt8] {
        var bytes = input
        let position = int(bytes.count + 1)
        switch int(17) {
        case 0: // flip a bit
            guard !bytes.isEmpty else { return bytes }
            let at = int(bytes.count), bit = int(8)
            bytes[at] ^= UInt8(1 << bit)
            log.append("flip bit \(bit) at \(at)")
        case 1: // a random byte
            guard !bytes.isEmpty else { return bytes }
            let at = int(bytes.count)
            bytes[at] = UInt8(truncatingIfNeeded: rng.next())
            log.append("byte at \(at)")
        case 2, 3: // TOML-significant characters
            let text = pick(Self.significant)
            bytes.insert(contentsOf: Array(text.utf8), at: position)
            log.append("insert \(text.debugDescription) at \(position)")
        case 4: // delete a line
            var lines = Self.lines(bytes)
            guard !lines.isEmpty else { return bytes }
            let at = int(lines.count)
            lines.remove(at: at)
            bytes = Self.join(lines)
            log.append("delete line \(at + 1)")
        case 5: // duplicate a line
            var lines = Self.lines(bytes)
            guard !lines.isEmpty else { return bytes }
            let at = int(lines.count), to = int(lines.count + 1)
            lines.insert(lines[at], at: to)
            bytes = Self.join(lines)
            log.append("duplicate line \(at + 1) before \(to + 1)")
        case 6: // swap the values of two `key = value` lines
            var lines = Self.lines(bytes)
            let assignments = lines.indices.filter { lines[$0].contains(UInt8(ascii: "=")) }
            guard assignments.count >= 2 else { return bytes }
            let a = pick(assignments), b = pick(assignments)
            let (keyA, valueA) = Self.split(lines[a]), (keyB, valueB) = Self.split(lines[b])
            lines[a] = keyA + valueB
            lines[b] = keyB + valueA
            bytes = Self.join(lines)
            log.append("swap values of lines \(a + 1) and \(b + 1)")
        case 7, 8: // a number: huge, negative, odd
            bytes = replaceValue(bytes, with: pick(Self.numbers), log: &log)
        case 9: // another type of value
            bytes = replaceValue(bytes, with: pick(Self.values), log: &log)
        case 10: // unicode
            let text = pick(Self.unicode)
            bytes.insert(contentsOf: Array(text.utf8), at: position)
            log.append("insert \(text.debugDescription) at \(position)")
        case 11: // a very long string, key or comment
            let length = pick([1_000, 10_000, 50_000])
            let filler = String(repeating: pick(["a", "é", "\\u00e9", "*", "[", "\\\""]), count: length)
            let text = pick(["\"\(filler)\"", "\(filler)", "#\(filler)", "\"\(filler)\" = 1\n"])
            if chance(50) {
                bytes = replaceValue(bytes, with: text, log: &log)
            } else {
                bytes.insert(contentsOf: Array(text.utf8), at: position)
                log.append("insert a \(text.utf8.count)-byte run at \(position)")
            }
        case 12: // truncate
            bytes = Array(bytes[..<position])
            log.append("truncate at \(position)")
        case 13: // delete a range
            guard !bytes.isEmpty else { return bytes }
            let start = int(bytes.count), length = 1 + int(min(64, bytes.count - start))
            bytes.removeSubrange(start..<min(bytes.count, start + length))
            log.append("delete \(length) bytes at \(start)")
        case 14: // deep nesting
            let depth = pick([10, 100, 257, 1_000, 3_000])
            let text = pick([
                "x = " + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "\n",
                "x = " + String(repeating: "{ a = ", count: depth) + "1" + String(repeating: " }", count: depth) + "\n",
                "x = " + String(repeating: "[", count: depth) + "\n",
                "[" + Array(repeating: "a", count: depth).joined(separator: ".") + "]\n",
                Array(repeating: "k", count: depth).joined(separator: ".") + " = 1\n",
            ])
            bytes.insert(contentsOf: Array(text.utf8), at: Self.lineStart(bytes, near: position))
            log.append("insert nesting \(depth) deep at \(position)")
        case 15: // lines from another file
            guard !donors.isEmpty else { return bytes }
            let donor = Self.lines(pick(donors))
            guard !donor.isEmpty else { return bytes }
            var lines = Self.lines(bytes)
            let from = int(donor.count), count = 1 + int(min(8, donor.count - from))
            let at = int(lines.count + 1)
            lines.insert(contentsOf: donor[from..<min(donor.count, from + count)], at: at)
            bytes = Self.join(lines)
            log.append("splice \(count) donor lines before line \(at + 1)")
        default: // a line of random bytes
            let length = 1 + int(40)
            let junk = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            bytes.insert(contentsOf: junk, at: position)
            log.append("insert \(length) random bytes at \(position)")
        }
        return bytes
    }

    /// Replaces the value of a random `key = value` line (or inserts `key = text` if there is none).
    private mutating func replaceValue(_ bytes: [UInt8], with text: String, log: inout [String]) -> [UInt8] {
        var lines = Self.lines(bytes)
        let assignments = lines.indices.filter { lines[$0].contains(UInt8(ascii: "=")) }
        guard !assignments.isEmpty else {
            log.append("add `x = \(text.prefix(40))`")
            return bytes + Array("\nx = \(text)\n".utf8)
        }
        let at = pick(assignments)
        lines[at] = Self.split(lines[at]).key + Array(" \(text)".utf8)
        log.append("line \(at + 1) value := \(text.prefix(40))\(text.count > 40 ? "…(\(text.utf8.count) bytes)" : "")")
        return Self.join(lines)
    }

    static func lines(_ bytes: [UInt8]) -> [[UInt8]] {
        bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
    }

    static func join(_ lines: [[UInt8]]) -> [UInt8] {
        Array(lines.joined(separator: [UInt8(ascii: "\n")]))
    }

    /// `key =` and ` value` of a line (split at the first `=`).
    static func split(_ line: [UInt8]) -> (key: [UInt8], value: [UInt8]) {
        guard let equals = line.firstIndex(of: UInt8(ascii: "=")) else { return (line, []) }
        return (Array(line[...equals]), Array(line[(equals + 1)...]))
    }

    static func lineStart(_ bytes: [UInt8], near position: Int) -> Int {
        var at = min(position, bytes.count)
        while at > 0, bytes[at - 1] != UInt8(ascii: "\n") { at -= 1 }
        return at
    }
}

// MARK: - Checking one input

/// Which loader an input goes through.
enum FuzzTarget: String, Sendable {
    case policy, fixture

    /// Loads `text`: nil when accepted, the errors when rejected.
    func load(_ text: String, file: String) -> LocatedErrors? {
        do {
            switch self {
            case .policy: _ = try PolicyLoader.load(text: text, file: file)
            case .fixture: _ = try FixtureLoader.load(text: text, file: file)
            }
            return nil
        } catch {
            return error
        }
    }
}

/// What one campaign did, and what went wrong.
struct FuzzReport {
    var inputs = 0
    var accepted = 0
    var rejected = 0
    var slowest: Duration = .zero
    var slowestIndex = -1
    var problems: [String] = []
    var elapsed: Duration = .zero

    var summary: String {
        "\(inputs) inputs (\(accepted) accepted, \(rejected) rejected) in \(elapsed); slowest input #\(slowestIndex): \(slowest)"
    }
}

enum LoaderFuzzer {
    /// The file name inputs are loaded under; every error must start with it.
    static let fileName = "fuzz/input.toml"
    /// `FILE:LINE:COLUMN: message`, message not empty, on one line.
    nonisolated(unsafe) static let errorLine = #/fuzz/input\.toml:([0-9]+):([0-9]+): ([^\s][^\n\r]*)/#

    /// Loads `text` with `target` and returns what is wrong with how it was rejected (empty if nothing),
    /// and whether it was accepted.
    static func check(_ text: String, target: FuzzTarget) -> (problems: [String], accepted: Bool) {
        guard let errors = target.load(text, file: fileName) else { return ([], true) }
        guard !errors.errors.isEmpty else { return (["rejected with no errors at all"], false) }
        // Lines as the loaders count them: split at \n; a line's length in Unicode scalars.
        let lineLengths = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map(\.count)
        var problems: [String] = []
        for error in errors.errors {
            let line = error.description
            guard let match = line.wholeMatch(of: errorLine) else {
                problems.append("not `FILE:LINE:COLUMN: message` on one line: \(line.debugDescription.prefix(300))")
                continue
            }
            let row = Int(match.output.1) ?? 0
            let column = Int(match.output.2) ?? 0
            guard row >= 1, row <= lineLengths.count else {
                problems.append("line \(row) outside the input's \(lineLengths.count) lines: \(line.prefix(300))")
                continue
            }
            // toml++ puts an end of file inside a multi-line string that ends in a line break one past
            // that line break (three quotes, `abc`, a line break: 1:12 on a 10-character line): known, tolerated for that message only.
            let slack = error.message.hasSuffix("encountered end-of-file") ? 2 : 1
            guard column >= 1, column <= lineLengths[row - 1] + slack else {
                problems.append("column \(column) outside line \(row)'s \(lineLengths[row - 1]) characters (+1): \(line.prefix(300))")
                continue
            }
        }
        return (problems, false)
    }

    /// Runs `count` inputs made by `make` (from each input's own random generator) through `target`.
    static func run(campaign: UInt8, target: FuzzTarget, count: Int,
                    make: (inout FuzzRNG, inout [String]) -> [UInt8]) -> FuzzReport {
        FuzzWatch.install()
        var report = FuzzReport()
        let seed = FuzzSettings.seed
        let start = ContinuousClock.now
        for index in 0..<count {
            if let only = FuzzSettings.only, only != index { continue }
            var rng = FuzzRNG(seed: FuzzRNG.inputSeed(run: seed, index: index))
            var log: [String] = []
            let bytes = make(&rng, &log)
            let text = String(decoding: bytes, as: UTF8.self)
            FuzzWatch.begin(campaign: campaign, seed: seed, index: index, text: text)
            let before = ContinuousClock.now
            let (problems, accepted) = check(text, target: target)
            let took = ContinuousClock.now - before
            FuzzWatch.end()
            report.inputs += 1
            if accepted { report.accepted += 1 } else { report.rejected += 1 }
            if took > report.slowest { (report.slowest, report.slowestIndex) = (took, index) }
            var found = problems
            if took > .seconds(FuzzSettings.slow) { found.append("took \(took) (over \(FuzzSettings.slow) s)") }
            if !found.isEmpty, report.problems.count < 20 {
                let file = FileManager.default.temporaryDirectory
                    .appendingPathComponent("fuzz-\(FuzzWatch.campaignNames[Int(campaign)])-\(seed)-\(index).toml")
                try? Data(bytes).write(to: file)
                report.problems.append("input #\(index) (FUZZ_SEED=\(seed) FUZZ_ONLY=\(index), \(log.joined(separator: "; ")), "
                    + "saved as \(file.path)): \(found.joined(separator: " | "))")
            }
        }
        report.elapsed = ContinuousClock.now - start
        return report
    }
}
