import Testing
@testable import AudioPolicy

/// The errors loading `text` gives, as `LINE:COLUMN: message` lines.
private func errors(_ text: String) -> [String] {
    do {
        _ = try FixtureLoader.load(text: text, file: "f.toml")
        return []
    } catch {
        return error.errors.map { "\($0.location.line):\($0.location.column): \($0.message)" }
    }
}

/// A step as `at line: event` or `at line: expect`, comparable in tests.
private func summary(_ step: FixtureStep) -> String {
    switch step.action {
    case .event(let event): "\(step.at) @\(step.location.line): \(event)"
    case .expect(let expectation): "\(step.at) @\(step.location.line): expect \(expectation)"
    case .reload(let path): "\(step.at) @\(step.location.line): reload \(path)"
    }
}

private func same(_ a: FixtureStep.Action, _ b: FixtureStep.Action) -> Bool {
    switch (a, b) {
    case let (.event(a), .event(b)): a == b
    case let (.expect(a), .expect(b)): a == b
    default: false
    }
}

@Suite("FixtureLoader")
struct FixtureLoaderTests {
    @Test func loadsEveryVerbInTimeThenFileOrder() throws {
        let fixture = try FixtureLoader.load(text: """
            description = "every verb"
            policy = "../policies/car.toml"

            [[event]]
            at = 0
            start = "music"
            properties = { "media.role" = "music", "application.process.id" = 42, "x.flag" = true, "x.f" = 1.5 }
            player = "org.mpris.MediaPlayer2.mpv"

            [[expect]]
            at = 0
            stream = "music"
            state = "playing"

            [[event]]
            at = 200
            interrupt = "hook"
            class = "short"
            properties = { "application.name" = "gps" }

            [[event]]
            at = 50
            volume = "music"
            level = 1

            [[expect]]
            at = 200
            now-playing = "music"

            [[event]]
            at = 200
            mute = "music"
            muted = true

            [[event]]
            at = 300
            release = "hook"

            [[event]]
            at = 300
            paused = "music"

            [[event]]
            at = 400
            playing = "music"

            [[event]]
            at = 400
            change = "music"
            properties = { "media.role" = "video" }

            [[expect]]
            at = 450
            stream = "music"
            state = "ducked"
            volume = 0.2
            muted = false

            [[event]]
            at = 500
            start = "beep"
            muted = true

            [[event]]
            at = 500
            end = "music"

            [[expect]]
            at = 1000
            now-playing = ""
            """, file: "tests/every.toml")
        #expect(fixture.file == "tests/every.toml")
        #expect(fixture.description == "every verb")
        #expect(fixture.policyPath == "../policies/car.toml")
        let music = StreamID("music")
        let expected: [(Milliseconds, Int, FixtureStep.Action)] = [
            (0, 4, .event(.streamStarted(music, [
                "media.role": "music", "application.process.id": "42", "x.flag": "true", "x.f": "1.5",
            ], player: PlayerID("org.mpris.MediaPlayer2.mpv")))),
            (0, 10, .expect(.stream(music, state: .playing, volume: nil, muted: nil))),
            (50, 21, .event(.userVolume(music, 1))),
            (200, 15, .event(.interruptionBegan(token: "hook", className: "short", ["application.name": "gps"]))),
            (200, 26, .expect(.nowPlaying(music))),
            (200, 30, .event(.userMute(music, true))),
            (300, 35, .event(.interruptionEnded(token: "hook"))),
            (300, 39, .event(.playback(music, playing: false))),
            (400, 43, .event(.playback(music, playing: true))),
            (400, 47, .event(.streamChanged(music, ["media.role": "video"]))),
            (450, 52, .expect(.stream(music, state: .ducked, volume: 0.2, muted: false))),
            (500, 59, .event(.streamStarted("beep", [:], player: nil, muted: true))),
            (500, 64, .event(.streamEnded(music))),
            (1000, 68, .expect(.nowPlaying(nil))),
        ]
        try #require(fixture.steps.count == expected.count)
        for (step, (at, line, action)) in zip(fixture.steps, expected) {
            #expect(step.at == at && step.location.line == line && same(step.action, action), "\(summary(step))")
        }
        #expect(fixture.steps.allSatisfy { $0.location.file == "tests/every.toml" && $0.location.column == 1 })
    }

    @Test func emptyFixture() throws {
        let fixture = try FixtureLoader.load(text: "# nothing yet\n", file: "empty.toml")
        #expect(fixture.steps.isEmpty)
        #expect(fixture.description == nil)
        #expect(fixture.policyPath == nil)
    }

    @Test func inlineArraysOfTablesWork() throws {
        let fixture = try FixtureLoader.load(text: """
            event = [{ at = 10, start = "a" }, { at = 0, end = "b" }]
            """, file: "f.toml")
        #expect(fixture.steps.map(summary) == [
            "0 @1: streamEnded(b)",
            "10 @1: streamStarted(a, [:], player: nil, playing: true, muted: false, held: false, output: nil)",
        ])
        #expect(fixture.steps.map(\.location.column) == [36, 10])
    }

    struct Bad: CustomTestStringConvertible, Sendable {
        var name: String
        var text: String
        var errors: [String]
        var testDescription: String { name }
    }

    static let bad: [Bad] = [
        Bad(name: "unknown top-level key", text: """
            polcy = "x.toml"
            """, errors: [
                "1:1: unknown key `polcy` in the fixture (did you mean `policy`?); allowed keys: description, policy, players-obey-pause, event, expect",
            ]),
        Bad(name: "missing or bad at", text: """
            [[event]]
            start = "a"

            [[event]]
            at = -1
            end = "a"

            [[expect]]
            at = "1s"
            now-playing = "a"
            """, errors: [
                "1:1: missing `at` (ms from the start of the fixture)",
                "5:6: `at` must not be negative, got -1",
                "9:6: `at` must be a whole number of ms, got string",
            ]),
        Bad(name: "no verb, two verbs", text: """
            [[event]]
            at = 0

            [[event]]
            at = 0
            start = "a"
            end = "a"
            """, errors: [
                "1:1: event needs one of `start`, `end`, `volume`, `mute`, `playing`, `paused`, `interrupt`, `interrupt-after-call`, `release`, `change`, `player-gone`, `audible`, `silent`, `measuring`, `capture`, `capture-end`, `player-changed`, `pause-ignored`, `claim`, `stop`, `output`, `output-gone`, `move`, `focus`, `window-closed`, `last-window-closed`, `focus-unknown`, `server-gone`, `reload`, `saved-start`, `le… (78 more characters)",
                "4:1: event has `start` and `end`; an event does one thing",
            ]),
        Bad(name: "unknown event key", text: """
            [[event]]
            at = 0
            start = "a"
            propertes = {}
            """, errors: [
                "4:1: unknown key `propertes` in [[event]] (did you mean `properties`?); allowed keys: at, start, end, volume, mute, playing, paused, interrupt, interrupt-after-call, release, change, player-gone, audible, silent, measuring, capture, capture-end, player-changed, pause-ignored, claim, stop, output, output-gone, move, focus, window-closed, last-window-closed, focus-unknown, server-gone, reload, saved-star… (194 more characters)",
            ]),
        Bad(name: "keys of another verb", text: """
            [[event]]
            at = 0
            start = "a"
            level = 0.5
            class = "short"
            """, errors: [
                "4:1: `level` does not go with `start`",
                "5:1: `class` does not go with `start`",
            ]),
        Bad(name: "required keys missing", text: """
            [[event]]
            at = 0
            volume = "a"

            [[event]]
            at = 0
            mute = "a"

            [[event]]
            at = 0
            interrupt = "t"

            [[event]]
            at = 0
            change = "a"
            """, errors: [
                "1:1: `volume` needs `level`",
                "5:1: `mute` needs `muted`",
                "9:1: `interrupt` needs `class`",
                "13:1: `change` needs `properties`",
            ]),
        Bad(name: "values of the wrong type or range", text: """
            [[event]]
            at = 0
            volume = "a"
            level = 2

            [[event]]
            at = 0
            mute = "a"
            muted = "yes"

            [[event]]
            at = 0
            start = 7
            player = true

            [[event]]
            at = 0
            end = ""
            """, errors: [
                "4:9: `level` must be between 0 and 1.5, got 2.0",
                "9:9: `muted` must be true or false, got string",
                "13:9: `start` must be a string, got integer",
                "14:10: `player` must be a string, got boolean",
                "18:7: `end` needs a stream id, got \"\"",
            ]),
        Bad(name: "bad properties", text: """
            [[event]]
            at = 0
            start = "a"
            properties = { media.role = "music", "x" = [1] }

            [[event]]
            at = 0
            change = "a"
            properties = "media.role=music"
            """, errors: [
                "4:16: `media` in `properties` is a table; quote property names that contain dots, as in \"media.role\" = \"music\"",
                "4:44: property values must be strings, got array",
                "9:14: `properties` must be a table like { \"media.role\" = \"music\" }, got string",
            ]),
        Bad(name: "bad expectations", text: """
            [[expect]]
            at = 0
            stream = "a"
            state = "duked"

            [[expect]]
            at = 0
            stream = "a"

            [[expect]]
            at = 0
            stream = "a"
            now-playing = "a"

            [[expect]]
            at = 0
            now-playing = "a"
            muted = true

            [[expect]]
            at = 0

            [[expect]]
            at = 0
            stream = "a"
            volume = "loud"
            foo = 1
            """, errors: [
                "4:9: unknown state \"duked\" (did you mean \"ducked\"?); states: playing, ducked, paused, waiting, ended",
                "6:1: expect for a stream needs `state`, `volume`, `muted`, `sent` or `not-sent`",
                "10:1: expect has `stream` and `now-playing`; write two [[expect]] tables",
                "18:1: `muted` does not go with `now-playing`",
                "20:1: expect needs `stream` or `now-playing`",
                "26:10: `volume` must be a number, got string",
                "27:1: unknown key `foo` in [[expect]]; allowed keys: at, stream, state, volume, muted, sent, not-sent, now-playing",
            ]),
        Bad(name: "bad sent expectations", text: """
            [[expect]]
            at = 0
            stream = "a"
            sent = "put-bak"

            [[expect]]
            at = 0
            stream = "a"
            sent = "ramp"
            state = "ducked"

            [[expect]]
            at = 0
            stream = "a"
            not-sent = [1]

            [[expect]]
            at = 0
            now-playing = "a"
            sent = "ramp"
            """, errors: [
                "4:8: unknown command \"put-bak\" (did you mean \"put-back\"?); commands: ramp, mute, hold, unmute, pause, resume, yield-volume, adopt-level, rewrite-level, put-back, put-back-level, put-back-unmute, repair-saved, measure, stop-measuring",
                "10:1: `state` does not go with `sent` or `not-sent`; write two [[expect]] tables",
                "15:12: `not-sent` must be a command's name or an array of them, like [\"put-back-level\", \"adopt-level\"], got array",
                "20:1: `sent` does not go with `now-playing`",
            ]),
        Bad(name: "event that is not an array of tables", text: """
            [event]
            at = 0
            """, errors: ["1:1: `event` must be an array of tables, written [[event]], got table"]),
        Bad(name: "syntax error", text: """
            [[event]]
            at = 0
            start = "a
            """, errors: ["3:11: syntax error in string: encountered end-of-file"]),
    ]

    @Test(arguments: bad)
    func rejects(_ c: Bad) {
        #expect(errors(c.text) == c.errors)
    }

    @Test func classNamesAreNotCheckedHere() throws {
        let fixture = try FixtureLoader.load(text: """
            [[event]]
            at = 0
            interrupt = "t"
            class = "no-such-class"
            """, file: "f.toml")
        #expect(fixture.steps.map(summary) == [#"0 @1: interruptionBegan(token: t, className: "no-such-class", [:])"#])
    }
}
