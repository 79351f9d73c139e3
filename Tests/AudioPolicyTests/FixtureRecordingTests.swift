import Foundation
import Testing
@testable import AudioPolicy

/// Every event kind the engine takes, with awkward text (quotes, backslashes, control characters, dots).
private let everyEvent: [Event] = [
    .streamStarted("1", ["media.role": "music", "application.name": "a \"quoted\" \\ name\n\t\u{1}"],
                   player: PlayerID("org.mpris.MediaPlayer2.mpv")),
    .streamStarted("2", [:], player: nil),
    .streamStarted("3", ["application.name": "linphone"], player: nil, playing: false),
    .startedAtOurSave("1", levelAway: true, mutedByUs: false),
    .startedAtOurSave("2", levelAway: false, mutedByUs: true),
    .levelTold("1", muted: false),
    .levelTold("2", muted: true),
    .streamChanged("1", ["media.role": "video"]),
    .streamEnded("1"),
    .userVolume("1", 0.25),
    .userVolume("2", 0.5, overtakesOurWrite: true),
    .userMute("1", true),
    .playback("1", playing: false),
    .playback("1", playing: true),
    .interruptionBegan(token: "hook-1", className: "short", ["application.name": "espeak"]),
    .interruptionEnded(token: "hook-1"),
    .playerChanged("1", PlayerID("org.mpris.MediaPlayer2.vlc")),
    .playerChanged("1", nil),
    .pauseIgnored("1"),
    .playerGone(PlayerID("org.mpris.MediaPlayer2.mpv")),
    .nowPlayingClaimed("claim-3", ["application.name": "radio"], player: PlayerID("hook:3")),
    .audibility("1", audible: false),
    .audibility("1", audible: true),
    .measuring("1"),
    .capture("9", ["application.name": "Chromium"]),
    .capture("10", ["application.name": "obs"], monitor: true, corked: true),
    .captureEnded("9"),
    .serverGone,
]

@Suite("FixtureEvent and FixtureRecording: what `record` writes, `test` reads back")
struct FixtureRecordingTests {
    @Test("every event kind written as a fixture table loads back as the same event")
    func everyEventRoundTrips() throws {
        var lines: [String] = []
        for (offset, event) in everyEvent.enumerated() {
            let written = try #require(FixtureEvent(event), "\(event) has no fixture verb")
            lines += ["", "[[event]]", "at = \(offset)"] + written.tomlLines
        }
        let fixture = try FixtureLoader.load(text: lines.joined(separator: "\n"), file: "round-trip.toml")
        let read = fixture.steps.compactMap { step -> Event? in
            if case let .event(event) = step.action { return event }
            return nil
        }
        #expect(read == everyEvent)
        #expect(FixtureEvent(.tick) == nil, "ticks are the runner's, never written")
    }

    @Test("a policy reload is written as the path of its policy and read back as a reload of it")
    func reloadIsWrittenByPath() throws {
        var policy = Policy.embeddedDefault
        policy.source = "/home/me/.config/audio-policyd/policy.toml"
        let written = try #require(FixtureEvent(.policyReplaced(policy)))
        #expect(written.tomlLines == [#"reload = "/home/me/.config/audio-policyd/policy.toml""#])
        let text = (["[[event]]", "at = 5"] + written.tomlLines).joined(separator: "\n")
        let step = try #require(try FixtureLoader.load(text: text, file: "reload.toml").steps.first)
        guard case let .reload(path) = step.action else { Issue.record("read back as \(step.action)"); return }
        #expect(path == policy.source)
    }

    @Test("an input event survives its JSON wire form")
    func jsonRoundTrips() throws {
        for event in everyEvent {
            let written = try #require(FixtureEvent(event))
            let data = try JSONEncoder().encode(written)
            #expect(try JSONDecoder().decode(FixtureEvent.self, from: data) == written)
        }
        // The control: an object with two verbs is refused, not guessed at.
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(FixtureEvent.self, from: Data(#"{"start":"1","end":"1"}"#.utf8))
        }
    }

    @Test("titles and personal names are left out unless asked for")
    func titlesLeftOut() throws {
        let properties: Properties = ["media.name": "Secret song", "application.process.user": "alice",
                                      "media.role": "music"]
        for withTitles in [false, true] {
            var recording = FixtureRecording(withTitles: withTitles)
            recording.input(FixtureEvent(verb: "start", id: "1", properties: properties), at: 100)
            let text = recording.text(description: "d")
            #expect(text.contains("Secret song") == withTitles, "\(text)")
            #expect(text.contains("alice") == withTitles, "\(text)")
            #expect(text.contains("\"media.role\" = \"music\""), "\(text)")
        }
    }

    @Test("a factor is expected where its ramp settles, unless something about the stream came first")
    func factorExpectations() throws {
        var recording = FixtureRecording()
        recording.input(FixtureEvent(verb: "start", id: "m"), at: 1000)
        recording.input(FixtureEvent(verb: "start", id: "p", properties: ["media.role": "navigation"]), at: 2000)
        recording.stream("m", state: .ducked, muted: false, target: 0.1, settles: 2300, at: 2000)
        // The user sets the volume of "m" before the restore's ramp ends: that ramp's end is not expected.
        recording.input(FixtureEvent(verb: "end", id: "p"), at: 3000)
        recording.stream("m", state: .playing, muted: false, target: 1, settles: 5000, at: 3500)
        recording.input(FixtureEvent(verb: "volume", id: "m", level: 0.5), at: 4000)
        // A stream the recording never saw start gets no expectation.
        recording.stream("ghost", state: .ducked, muted: false, target: 0.1, settles: 4100, at: 4000)
        recording.nowPlaying("m", at: 4200)
        recording.nowPlaying("m", at: 4300)
        let text = recording.text(description: "d")
        let fixture = try FixtureLoader.load(text: text, file: "r.toml")
        let expectations = fixture.steps.compactMap { step -> String? in
            guard case let .expect(expectation) = step.action else { return nil }
            return "\(step.at) \(expectation)"
        }
        #expect(expectations == [
            "1000 stream(m, state: Optional(AudioPolicy.StreamState.ducked), volume: nil, muted: Optional(false))",
            "1300 stream(m, state: nil, volume: Optional(0.1), muted: nil)",
            "2500 stream(m, state: Optional(AudioPolicy.StreamState.playing), volume: nil, muted: Optional(false))",
            "3200 nowPlaying(Optional(m))",
        ], "\(text)")
        // Time 0 is the earliest line: the first start.
        #expect(fixture.steps.first?.at == 0)
    }
}
