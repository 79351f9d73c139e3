import AudioPolicy
import Foundation
import Fuzzing
import Testing

/// `audio-policyd check BAD...` on a few bad policies (handwritten, and fuzzed inputs the loader
/// rejects): exit status 1, and stderr is nothing but `FILE:LINE:COLUMN: message` lines, at least one
/// per bad file; a good file among them still says `FILE: ok`.
@Suite("Fuzz: audio-policyd check", .serialized)
struct CheckCommandFuzzTests {
    /// `AUDIO_POLICYD_BIN`, else the `audio-policyd` next to this test binary (same build folder, so
    /// `--scratch-path` builds test their own), else `.build/debug`.
    static let binary: String = {
        if let set = ProcessInfo.processInfo.environment["AUDIO_POLICYD_BIN"], !set.isEmpty { return set }
        let me = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                     ?? CommandLine.arguments[0])
        var folder = me.deletingLastPathComponent()
        for _ in 0..<4 { // …/debug/audio-policydPackageTests.xctest (or inside a bundle)
            let candidate = folder.appendingPathComponent("audio-policyd").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            folder = folder.deletingLastPathComponent()
        }
        return FuzzCorpus.root.appendingPathComponent(".build/debug/audio-policyd").path
    }()

    static func check(_ paths: [String]) throws -> CommandOutcome {
        try CommandOutcome.run(binary, ["check"] + paths)
    }

    /// Bad policies: handwritten ones, then fuzzed ones the loader rejects (by seed).
    static func badPolicies() -> [(name: String, bytes: [UInt8])] {
        var bad: [(String, [UInt8])] = [
            ("syntax", Array("[defaults\nclass = \"primary\"\n".utf8)),
            ("unknown-key", Array("[class.primary]\ngracee = 1\n".utf8)),
            ("cycle", Array("[class.a]\nkind = \"short\"\nabove = [\"b\"]\n[class.b]\nkind = \"short\"\nabove = [\"a\"]\n[class.primary]\n".utf8)),
            ("empty", []),
            ("not-utf8", [0x5B, 0xFF, 0xFE, 0x5D, 0x0A]),
            ("nul", Array("[defaults]\u{0}\nclass = 1\n".utf8)),
        ]
        let policies = FuzzCorpus.policies
        var index = 0
        while bad.count < 20, index < 2_000 {
            var rng = FuzzRNG(seed: FuzzRNG.inputSeed(run: FuzzSettings.seed, index: index))
            let original = policies[Int(rng.next() % UInt64(policies.count))]
            var log: [String] = []
            var mutator = Mutator(rng: rng, donors: [])
            let bytes = mutator.mutate(original.bytes, log: &log)
            if let text = String(bytes: bytes, encoding: .utf8), let errors = FuzzTarget.policy.load(text, file: "x"),
               !errors.errors.contains(where: { $0.message.contains("\n") || $0.message.contains("\r") }) {
                bad.append(("fuzzed-\(index)", bytes))
            }
            index += 1
        }
        return bad
    }

    @Test("check BAD exits 1 with FILE:LINE:COLUMN lines only")
    func checkBadFiles() throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.binary), "no audio-policyd at \(Self.binary)")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-check-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        let bad = Self.badPolicies()
        #expect(bad.count >= 20, "only \(bad.count) bad policies made")
        var paths: [String] = []
        for (name, bytes) in bad {
            let path = folder.appendingPathComponent("\(name).toml").path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            paths.append(path)
        }
        let good = FuzzCorpus.root.appendingPathComponent("policies/car.toml").path

        // One at a time: each exits 1, says nothing on stdout, and only located errors on stderr.
        for path in paths {
            let run = try Self.check([path])
            #expect(run.status == 1, "\(path): exit \(run.status) (FUZZ_SEED=\(FuzzSettings.seed))\n\(run.stderr)")
            #expect(run.stdout.isEmpty, "\(path): stdout \(run.stdout)")
            expectLocated(run.stderr, files: [path])
        }
        // All together, with a good file in the middle: still 1; the good one is `ok`.
        let all = Array(paths.prefix(5)) + [good] + Array(paths.dropFirst(5))
        let run = try Self.check(all)
        #expect(run.status == 1, "exit \(run.status)")
        #expect(run.stdout == "\(good): ok\n", "stdout: \(run.stdout)")
        expectLocated(run.stderr, files: paths)

        // The control: the good file alone passes, so the checks above can tell.
        let alone = try Self.check([good])
        #expect(alone.status == 0 && alone.stderr.isEmpty && alone.stdout == "\(good): ok\n", "\(alone)")
    }

    /// A quoted key with an escaped line break is named in "unknown key": its error stays on one line,
    /// the line break written `\n` (it once came out raw, on two lines).
    @Test("check: a key with an escaped line break gives a one-line error")
    func keyWithEscapedNewline() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-key-\(getpid()).toml").path
        try Data("[defaults]\n\"a\\nb\" = 1\n".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try Self.check([path])
        #expect(run.status == 1)
        expectLocated(run.stderr, files: [path])
        #expect(run.stderr.contains("a\\nb"), "\(run.stderr)")
    }

    /// Every stderr line is `FILE:LINE:COLUMN: message` for one of `files`, and each file has one.
    private func expectLocated(_ stderr: String, files: [String]) {
        var seen = Set<String>()
        for line in stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            let file = files.first { line.hasPrefix($0 + ":") }
            let rest = file.map { String(line.dropFirst($0.count)) } ?? ""
            let located = rest.wholeMatch(of: /:[1-9][0-9]*:[1-9][0-9]*: \S.*/) != nil
            #expect(file != nil && located, "not FILE:LINE:COLUMN: message: \(line.debugDescription)")
            if let file, located { seen.insert(file) }
        }
        #expect(stderr.hasSuffix("\n"), "stderr does not end in a newline: \(stderr.suffix(200).debugDescription)")
        for file in files where !seen.contains(file) {
            #expect(Bool(false), "no FILE:LINE:COLUMN line for \(file)")
        }
    }
}
