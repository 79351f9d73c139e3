import AudioPolicy
import Foundation
import Fuzzing
import Testing

/// Fuzzes the policy and fixture loaders with mutated shipped files, truncations and random bytes.
/// Properties: no crash (a crash ends the test process, after the handler in LoaderFuzzer.swift has
/// printed the seed and input), no hang (an input over 5 s is a failure, over 20 s aborts), and every
/// rejection is one or more `FILE:LINE:COLUMN: message` lines with LINE and COLUMN inside the input.
/// The seed is printed; see LoaderFuzzer.swift for reproducing an input.
@Suite("Fuzz: policy and fixture loaders", .serialized)
struct LoaderFuzzTests {
    init() {
        print("FUZZ_SEED=\(FuzzSettings.seed) FUZZ_SCALE=\(FuzzSettings.scale)")
    }

    private func expectClean(_ report: FuzzReport, _ what: String) {
        print("fuzz \(what): \(report.summary)")
        #expect(report.inputs > 0 || FuzzSettings.only != nil, "\(what): no inputs ran")
        #expect(report.problems.isEmpty,
                "\(what) (FUZZ_SEED=\(FuzzSettings.seed)):\n\(report.problems.joined(separator: "\n"))")
    }

    @Test("the corpus is there")
    func corpus() {
        #expect(FuzzCorpus.policies.count >= 3, "\(FuzzCorpus.policies.map(\.name))")
        #expect(FuzzCorpus.fixtures.count >= 40, "\(FuzzCorpus.fixtures.count) fixtures")
        // The unmutated files load: the checks below start from valid inputs.
        for (name, bytes) in FuzzCorpus.policies {
            #expect(FuzzTarget.policy.load(String(decoding: bytes, as: UTF8.self), file: name) == nil, "\(name)")
        }
        for (name, bytes) in FuzzCorpus.fixtures {
            #expect(FuzzTarget.fixture.load(String(decoding: bytes, as: UTF8.self), file: name) == nil, "\(name)")
        }
    }

    @Test("the checker fails on a misplaced or malformed error")
    func checkerCanFail() {
        // Guard against a checker that passes anything: a syntax error far past the end would be caught
        // only if the bounds are checked, so check the bounds code on a made-up error line directly.
        let good = LoaderFuzzer.check("[defaults]\nclass = 1\n", target: .policy)
        #expect(good.problems.isEmpty && !good.accepted, "\(good)")
        #expect(LoaderFuzzer.check(try! String(contentsOf: FuzzCorpus.root.appendingPathComponent("policies/default.toml"),
                                                encoding: .utf8), target: .policy).accepted)
        #expect("x.toml:1:1: m".wholeMatch(of: LoaderFuzzer.errorLine) == nil)
        #expect("fuzz/input.toml:1:1: ".wholeMatch(of: LoaderFuzzer.errorLine) == nil)
        #expect("fuzz/input.toml:1:1: two\nlines".wholeMatch(of: LoaderFuzzer.errorLine) == nil)
        #expect("fuzz/input.toml:3:7: fine".wholeMatch(of: LoaderFuzzer.errorLine) != nil)
    }

    @Test("mutated policies")
    func mutatedPolicies() {
        let donors = FuzzCorpus.policies.map(\.bytes) + FuzzCorpus.fixtures.prefix(10).map(\.bytes)
        let report = LoaderFuzzer.run(campaign: 1, target: .policy, count: FuzzSettings.count(8_000)) { rng, log in
            let original = FuzzCorpus.policies[Int(rng.next() % UInt64(FuzzCorpus.policies.count))]
            log.append(original.name)
            var mutator = Mutator(rng: rng, donors: donors)
            defer { rng = mutator.rng }
            return mutator.mutate(original.bytes, log: &log)
        }
        expectClean(report, "mutated policies")
    }

    @Test("mutated fixtures")
    func mutatedFixtures() {
        let donors = FuzzCorpus.fixtures.map(\.bytes)
        let report = LoaderFuzzer.run(campaign: 2, target: .fixture, count: FuzzSettings.count(10_000)) { rng, log in
            let original = FuzzCorpus.fixtures[Int(rng.next() % UInt64(FuzzCorpus.fixtures.count))]
            log.append(original.name)
            var mutator = Mutator(rng: rng, donors: donors)
            defer { rng = mutator.rng }
            return mutator.mutate(original.bytes, log: &log)
        }
        expectClean(report, "mutated fixtures")
    }

    /// Random bytes: mostly plain junk, some biased to TOML's alphabet so a few get past the tokenizer.
    static func randomInput(_ rng: inout FuzzRNG, _ log: inout [String]) -> [UInt8] {
        let length = Int(rng.next() % 400)
        let alphabet = Array("[]{}=\",#\n .'abcl0123456789-_\"\"\"tru fse".utf8)
        let biased = rng.next() % 2 == 0
        log.append("\(length) \(biased ? "TOML-alphabet" : "random") bytes")
        return (0..<length).map { _ in
            let value = rng.next()
            return biased ? alphabet[Int(value % UInt64(alphabet.count))] : UInt8(truncatingIfNeeded: value)
        }
    }

    @Test("random bytes as a policy")
    func randomPolicies() {
        expectClean(LoaderFuzzer.run(campaign: 3, target: .policy, count: FuzzSettings.count(4_000),
                                     make: Self.randomInput), "random bytes as a policy")
    }

    @Test("random bytes as a fixture")
    func randomFixtures() {
        expectClean(LoaderFuzzer.run(campaign: 4, target: .fixture, count: FuzzSettings.count(4_000),
                                     make: Self.randomInput), "random bytes as a fixture")
    }

    @Test("every truncation of the shipped policies")
    func truncatedPolicies() {
        let files = FuzzCorpus.policies.filter { $0.name != "policies/default.toml" }
        expectClean(Self.truncate(files, target: .policy, campaign: 5), "truncated policies")
    }

    @Test("every truncation of a few fixtures")
    func truncatedFixtures() {
        let names = ["Tests/Fixtures/hooks/", "Tests/Fixtures/real-apps/", "Tests/Fixtures/policies/"]
        let files = names.compactMap { prefix in FuzzCorpus.fixtures.first { $0.name.hasPrefix(prefix) } }
        #expect(files.count == names.count, "\(files.map(\.name))")
        expectClean(Self.truncate(files, target: .fixture, campaign: 6), "truncated fixtures")
    }

    static func truncate(_ files: [(name: String, bytes: [UInt8])], target: FuzzTarget, campaign: UInt8) -> FuzzReport {
        let cuts = files.flatMap { file in (0...file.bytes.count).map { (file.name, Array(file.bytes[..<$0])) } }
        print("truncating \(files.map { "\($0.name) (\($0.bytes.count) bytes)" }.joined(separator: ", "))")
        var next = 0
        return LoaderFuzzer.run(campaign: campaign, target: target, count: cuts.count) { _, log in
            // run() asks for inputs in order; FUZZ_ONLY skips the others without asking.
            let index = FuzzSettings.only ?? next
            next += 1
            log.append("\(cuts[index].0) cut at byte \(cuts[index].1.count)")
            return cuts[index].1
        }
    }
}

/// Headers toml++ 3.4.0 (inside TOMLKit) aborted on — `parse_key` asserts on what follows `[` —
/// found by the fuzzer above (`[` alone on a line in policies/car.toml); now syntax errors at the
/// character after the brackets. Lookalikes that are valid TOML still load.
@Suite("Fuzz: regressions")
struct LoaderFuzzRegressionTests {
    @Test(arguments: [
        ("[\n", 1, 2), ("[", 0, 0), ("[ \n", 1, 3), ("[#x\n", 1, 2), ("[=\n", 1, 2), ("[[\n", 1, 3),
        ("[[[1]]]\n", 1, 3), ("[[ .a]]\n", 1, 4), ("[defaults]\nclass = \"primary\"\n  [\t{\n", 3, 5),
        ("\u{FEFF}[\u{E9}]\n", 1, 2), ("[\r\n", 1, 2), ("a = 1\n[,\n", 2, 2),
    ])
    func headerThatCrashedTOMLPlusPlus(_ text: String, _ line: Int, _ column: Int) {
        for target in [FuzzTarget.policy, .fixture] {
            let errors = target.load(text, file: "h.toml")?.errors ?? []
            #expect(!errors.isEmpty, "\(target) accepted \(text.debugDescription)")
            // ("[" alone at the end: toml++'s own end-of-file error, wherever it puts it.)
            if line > 0 {
                #expect(errors.map(\.location) == [SourceLocation(file: "h.toml", line: line, column: column)],
                        "\(text.debugDescription): \(errors)")
                #expect(errors.allSatisfy { $0.message.hasPrefix("syntax error in table header") }, "\(errors)")
            }
        }
    }

    /// The other assertion: `parse_value` on a character that ends a value, where an array expects one
    /// (found by the fuzzer: `"vocal", }"*.vocal"` in policies/default.toml).
    @Test(arguments: [
        ("x = [}]\n", 1, 6), ("x = [1, }]\n", 1, 9), ("x = [ # c\n }]\n", 2, 2), ("x = [[}]]\n", 1, 7),
        ("x = { a = [ } ] }\n", 1, 13), ("x = [1\n,}]\n", 2, 2), ("x = [\u{2028}]\n", 1, 6),
        ("x = [1,\u{85}]\n", 1, 8), ("x = [\u{2029}]\n", 1, 6),
    ])
    func arrayValueThatCrashedTOMLPlusPlus(_ text: String, _ line: Int, _ column: Int) {
        for target in [FuzzTarget.policy, .fixture] {
            let errors = target.load(text, file: "a.toml")?.errors ?? []
            #expect(errors.map(\.location) == [SourceLocation(file: "a.toml", line: line, column: column)],
                    "\(text.debugDescription): \(errors)")
            #expect(errors.allSatisfy { $0.message.hasPrefix("syntax error in array") }, "\(errors)")
        }
    }

    /// The date-time assertions (found by the fuzzer in CI: `name = 1979-05-27Tß07:32:00Z` in
    /// policies/calls-only.toml aborted the test process): a non-digit after a date's `T`, and a
    /// date-like value, a space and one digit that ends there.
    @Test(arguments: [
        ("x = 1979-05-27Tß07:32:00Z\n", 1, 16, "after 'T', saw 'ß'"), ("x = 1979-05-27T:07:32\n", 1, 16, "saw ':'"),
        ("x = [1, 1979-05-27t_07:32, 2]\n", 1, 20, "after 't', saw '_'"), ("x=1979-05-27TT07:32\n", 1, 14, "saw 'T'"),
        ("x = { y = 1979-05-27 0\t7:32 }\n", 1, 22, "saw '0' alone"), ("x = 1979-05-ß7 7}\n", 1, 16, "saw '7' alone"),
        ("x = [\n  1979-05-27 0,\n]\n", 2, 14, "saw '0' alone"), ("x = 19_79-05-27 0\n", 1, 17, "saw '0' alone"),
    ])
    func dateTimeThatCrashedTOMLPlusPlus(_ text: String, _ line: Int, _ column: Int, _ saw: String) {
        for target in [FuzzTarget.policy, .fixture] {
            let errors = target.load(text, file: "d.toml")?.errors ?? []
            #expect(errors.map(\.location) == [SourceLocation(file: "d.toml", line: line, column: column)],
                    "\(text.debugDescription): \(errors)")
            #expect(errors.allSatisfy { $0.message.hasPrefix("syntax error in date-time") && $0.message.hasSuffix(saw) },
                    "\(errors)")
        }
    }

    /// Date-times toml++ reads, keys that look like dates, and the same shapes in strings and comments
    /// are not the guard's: they reach toml++ and load (or fail on what they are: a date is no string).
    @Test(arguments: [
        "x = 1979-05-27T07:32:00Z", "x = 1979-05-27 07:32:00", "x = 1979-05-27t07:32:00.5-07:00",
        "x = [1979-05-27 , 1]", "1979-05-27Tx = 1", "a.1979-05-27T_ = 1", "x = \"1979-05-27Tß\"", "x = 1 # 1979-05-27T:",
        "x = '1979-05-27 0'",
    ])
    func dateTimeLookalikesReachTOMLPlusPlus(_ line: String) {
        for target in [FuzzTarget.policy, .fixture] {
            let errors = target.load(line + "\n", file: "d.toml")?.errors ?? []
            #expect(!errors.contains { $0.message.hasPrefix("syntax error in date-time: expected a 2-digit hour after") },
                    "\(line.debugDescription): \(errors)")
        }
    }

    @Test func validLookalikesStillLoad() throws {
        let fixture = """
            description = \"\"\"
            [
            [=
            \"\"\"
            [[event]]
            at = 0
            start = "a"
            properties = { "x" = '[' }   # [
            [[ "expect" ]]
            at = 1
            now-playing = "a"
            """
        let loaded = try FixtureLoader.load(text: fixture, file: "f.toml")
        #expect(loaded.description == "[\n[=\n")
        let policy = """
            [ class . "primary" ]
            [class.call]
            above = [
              "primary",
            ]
            [[rule]]
            match = { "media.role" = [
              "phone" ] }
            class = "call"
            """
        #expect(try PolicyLoader.load(text: policy, file: "p.toml").rules.count == 1)
    }

    /// `"1e19 ms"` trapped converting to Int in the loader; an integer grace of Int.max loaded and then
    /// trapped in the engine (Audibility.graceEnds) when a stream was interrupted. Both found by the
    /// fuzzer's huge numbers; now errors at the value.
    @Test(arguments: ["\"1e19 ms\"", "\"1e300s\"", "\"9e15s\"", "9223372036854775807", "86400001", "\"86400.001s\""])
    func hugeDurationIsAnError(_ value: String) {
        for key in ["grace", "hold", "duck-ramp", "restore-ramp", "release-after"] {
            let text = "[class.primary]\n\(key) = \(value)\n"
            let errors = FuzzTarget.policy.load(text, file: "p.toml")?.errors ?? []
            #expect(errors.map(\.description) == ["p.toml:2:\(key.count + 4): `\(key)` must be at most 86400000 ms (a day), got \(value)"],
                    "\(text.debugDescription)")
        }
        let fixture = "[[event]]\nat = \(value)\nend = \"x\"\n"
        #expect(FuzzTarget.fixture.load(fixture, file: "f.toml") != nil, "\(fixture.debugDescription)")
        #expect(FuzzTarget.policy.load("[class.primary]\ngrace = 86400000\n[defaults]\nmute-fade = \"86400s\"\n",
                                       file: "p.toml") == nil)
    }
}
