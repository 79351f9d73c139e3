import Testing
@testable import AudioPolicy

/// `sent` and `not-sent` expectations: loaded from either spelling, and checked against the commands the
/// engine sent the stream at that moment only (a command of an earlier moment does not count).
@Suite("Sent expectations")
struct SentExpectationTests {
    private static let prompt = """
        [[event]]
        at = 0
        start = "game"
        properties = { "application.name" = "supertuxkart" }

        [[event]]
        at = 1000
        start = "prompt"
        properties = { "media.role" = "navigation" }

        """

    private func failures(_ expectations: String) throws -> [String] {
        let fixture = try FixtureLoader.load(text: Self.prompt + expectations, file: "f.toml")
        return FixtureRunner().run(fixture, policy: .embeddedDefault).failures.map(\.description)
    }

    @Test func loadsOneNameOrMany() throws {
        let fixture = try FixtureLoader.load(text: """
            [[expect]]
            at = 0
            stream = "a"
            sent = "put-back-level"

            [[expect]]
            at = 0
            stream = "a"
            sent = ["ramp", "mute"]
            not-sent = "pause"
            """, file: "f.toml")
        let expectations = fixture.steps.compactMap { step -> AudioPolicy.Expectation? in
            if case let .expect(expectation) = step.action { expectation } else { nil }
        }
        #expect(expectations == [.sent("a", sent: ["put-back-level"], notSent: []),
                                 .sent("a", sent: ["ramp", "mute"], notSent: ["pause"])])
    }

    @Test func aDuckIsSentAtItsMomentOnly() throws {
        #expect(try failures("""
            [[expect]]
            at = 1000
            stream = "game"
            sent = "ramp"
            not-sent = ["pause", "put-back"]
            """) == [])
        // The control: a moment later, the duck's ramp was sent before it.
        let late = try failures("""
            [[expect]]
            at = 1001
            stream = "game"
            sent = "ramp"
            """)
        #expect(late == [#"f.toml:10:1: stream "game" sent: expected ramp, got nothing"#], "\(late)")
        let unwanted = try failures("""
            [[expect]]
            at = 1000
            stream = "game"
            not-sent = "ramp"
            """)
        #expect(unwanted == [#"f.toml:10:1: stream "game" not-sent: expected ramp, got ramp"#], "\(unwanted)")
    }

    @Test func everyCommandForAStreamHasANameItIsListedUnder() {
        let id: StreamID = "a"
        let commands: [Command] = [
            .ramp(id, from: 1, to: 0.1, duration: 300), .mute(id, from: 1, fade: 300), .hold(id),
            .unmute(id, to: 1, fade: 300), .pause(id, PlayerID("p")), .resume(id, PlayerID("p")), .yieldVolume(id), .adoptLevel(id),
            .rewriteLevel(id),
            .putBack(id, level: true, unmute: true), .repairSaved(id), .measure(id, true), .measure(id, false),
        ]
        let named = commands.compactMap(SentCommand.names(of:))
        #expect(named.count == commands.count)
        #expect(Set(named.flatMap(\.names)) == Set(SentCommand.names))
        #expect(SentCommand.names(of: .putBack(id, level: false, unmute: true))?.names == ["put-back", "put-back-unmute"])
        #expect(SentCommand.names(of: .nowPlaying(id)) == nil)
    }
}
