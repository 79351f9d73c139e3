import AudioPolicy
import Foundation
import Testing

/// Replays every scenario fixture under `Tests/Fixtures` against the engine, as `audio-policyd test`
/// does, so `swift test` fails when a fixture does.
@Suite("Fixture suite")
struct FixtureSuiteTests {
    /// `Tests/Fixtures`, found from this file's path so the suite runs from any working directory.
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent() // AudioPolicyTests
        .deletingLastPathComponent() // Tests
        .appendingPathComponent("Fixtures")

    /// Every `.toml` under ``folder``, relative to it (so test names read `short/…`), sorted.
    static let fixtures: [String] = {
        let found = FileManager.default.enumerator(atPath: folder.path)?.compactMap { $0 as? String } ?? []
        return found.filter { $0.hasSuffix(".toml") }.sorted()
    }()

    /// Fewer than this means fixtures went missing (or the folder was not found).
    static let minimumCount = 40

    // MARK: - The fixtures

    @Test("enough fixtures are found")
    func enoughFixtures() {
        #expect(Self.fixtures.count >= Self.minimumCount,
                "found \(Self.fixtures.count) fixtures under \(Self.folder.path); expected at least \(Self.minimumCount)")
    }

    @Test("fixture passes", arguments: fixtures)
    func fixturePasses(_ relativePath: String) {
        let path = Self.folder.appendingPathComponent(relativePath).path
        let fixture: Fixture
        let policy: Policy
        let reloads: [String: Policy]
        do {
            fixture = try FixtureLoader.load(text: try Self.readText(path), file: path)
            policy = try Self.policy(for: fixture)
            reloads = try Self.reloads(for: fixture)
        } catch let errors as LocatedErrors {
            for error in errors.errors {
                Issue.record("\(error)", sourceLocation: Self.testingLocation(error.location, relativePath))
            }
            return
        } catch {
            Issue.record(error, "cannot load \(path)")
            return
        }

        // A fixture pins down a user expectation: it says which, and checks something.
        #expect(fixture.description.map { !$0.isEmpty } == true, "\(path): no `description`")
        let expectations = fixture.steps.filter { if case .expect = $0.action { true } else { false } }.count
            + (fixture.levels?.steps.filter(\.action.isExpectation).count ?? 0)
        #expect(expectations > 0, "\(path): no [[expect]]")

        let result = FixtureRunner(reloads: reloads).run(fixture, policy: policy)
        for failure in result.failures {
            Issue.record(
                "\(failure.location.file):\(failure.location.line): \(failure.subject): expected \(failure.expected), got \(failure.got)",
                sourceLocation: Self.testingLocation(failure.location, relativePath))
        }
    }

    // MARK: - The suite can fail

    @Test("a wrong expectation fails, reported at its line")
    func wrongExpectationFails() throws {
        // A call pauses the music; the second expectation wrongly says it plays.
        let text = """
            description = "deliberately wrong"

            [[event]]
            at = 0
            start = "music"
            properties = { "media.role" = "music", "application.name" = "mpv" }
            player = "org.mpris.MediaPlayer2.mpv"

            [[event]]
            at = 1000
            start = "call"
            properties = { "media.role" = "phone", "application.name" = "linphone" }

            [[expect]]
            at = 1000
            stream = "music"
            state = "paused"

            [[expect]]
            at = 1100
            stream = "music"
            state = "playing"
            """
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let wrongLine = try #require(lines.lastIndex(of: "[[expect]]")) + 1

        let fixture = try FixtureLoader.load(text: text, file: "wrong.toml")
        let result = FixtureRunner().run(fixture, policy: .embeddedDefault)

        #expect(!result.passed)
        try #require(result.failures.count == 1, "\(result.failures)")
        let failure = result.failures[0]
        #expect(failure.location.file == "wrong.toml")
        #expect(failure.location.line == wrongLine)
        #expect(failure.location.line == 19)
        #expect(failure.expected == "playing")
        #expect(failure.got == "paused")
    }

    @Test("a wrong volume fails; the right one, within the tolerance, passes")
    func wrongVolumeFails() throws {
        // Halfway through a navigation duck (0 dB to -20 dB over 300 ms) the factor is -10 dB = 0.316.
        func run(volume: Double) throws -> FixtureRunner.Result {
            let text = """
                [[event]]
                at = 0
                start = "music"
                properties = { "media.role" = "music", "application.name" = "mpv" }

                [[event]]
                at = 2000
                start = "prompt"
                properties = { "media.role" = "navigation", "application.name" = "gnome-maps" }

                [[expect]]
                at = 2150
                stream = "music"
                volume = \(volume)
                """
            return FixtureRunner().run(try FixtureLoader.load(text: text, file: "volume.toml"), policy: .embeddedDefault)
        }
        #expect(try run(volume: 0.316).passed)
        let wrong = try run(volume: 0.2)
        try #require(wrong.failures.count == 1)
        #expect(wrong.failures[0].location.line == 11)
        #expect(wrong.failures[0].got == "0.316")
    }

    // MARK: - Helpers

    /// The fixture's policy: the embedded default, or its `policy` file, relative to the fixture.
    static func policy(for fixture: Fixture) throws -> Policy {
        guard let written = fixture.policyPath else { return .embeddedDefault }
        return try policy(written, for: fixture)
    }

    /// The policies of the fixture's `reload` steps, by the path as written.
    static func reloads(for fixture: Fixture) throws -> [String: Policy] {
        var reloads: [String: Policy] = [:]
        for written in fixture.reloadPaths {
            reloads[written] = written == Policy.embeddedDefaultSource ? .embeddedDefault : try policy(written, for: fixture)
        }
        return reloads
    }

    /// The policy file at `written`: absolute, or relative to the fixture file.
    static func policy(_ written: String, for fixture: Fixture) throws -> Policy {
        let url = written.hasPrefix("/")
            ? URL(fileURLWithPath: written)
            : URL(fileURLWithPath: fixture.file).deletingLastPathComponent().appendingPathComponent(written)
        let path = url.standardizedFileURL.path
        return try PolicyLoader.load(text: try readText(path), file: path)
    }

    static func readText(_ path: String) throws -> String {
        try String(contentsOfFile: path, encoding: .utf8)
    }

    /// Points an issue at the fixture's own line, so editors show it there.
    static func testingLocation(_ location: AudioPolicy.SourceLocation, _ relativePath: String) -> Testing.SourceLocation {
        Testing.SourceLocation(fileID: "Fixtures/\(relativePath)", filePath: location.file,
                               line: max(1, location.line), column: max(1, location.column))
    }
}
