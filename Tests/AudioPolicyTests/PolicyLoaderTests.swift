import Foundation
import Testing
@testable import AudioPolicy

/// The repository root, found from this file, for reading `policies/`.
private let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

private func policyText(_ name: String) throws -> String {
    try String(contentsOf: repositoryRoot.appendingPathComponent("policies/\(name)"), encoding: .utf8)
}

/// The errors loading `text` gives, as `LINE:COLUMN: message` lines (the file is always `p.toml`).
private func errors(_ text: String) -> [String] {
    do {
        _ = try PolicyLoader.load(text: text, file: "p.toml")
        return []
    } catch {
        return error.errors.map { "\($0.location.line):\($0.location.column): \($0.message)" }
    }
}

@Suite("PolicyLoader")
struct PolicyLoaderTests {
    // MARK: Shipped policies

    @Test func embeddedDefaultLoads() {
        let policy = Policy.embeddedDefault
        #expect(policy.source == "<embedded default>")
        #expect(policy.defaultClass == "ambient")
        #expect(policy.muteFade == 500)
        #expect(Set(policy.classes.keys)
            == ["primary", "call", "navigation", "short", "speech", "notification", "ambient", "mix"])
        #expect(policy.rules.count == 26)
    }

    @Test func embeddedTextIsPoliciesDefaultToml() throws {
        // Run scripts/embed-default-policy after editing policies/default.toml.
        #expect(try policyText("default.toml") == Policy.embeddedDefaultText)
    }

    @Test(arguments: ["default.toml", "calls-only.toml", "car.toml", "focus.toml", "calls-duck.toml", "listening.toml"])
    func shippedPolicyLoads(_ name: String) throws {
        let policy = try PolicyLoader.load(text: try policyText(name), file: "policies/\(name)")
        #expect(policy.source == "policies/\(name)")
        #expect(policy.classes[policy.defaultClass] != nil)
        // default.toml is a whole policy; the others are drop-ins over the embedded default (`[drop-in]`).
        let files = name == "default.toml" ? ["policies/\(name)"] : [Policy.embeddedDefaultSource, "policies/\(name)"]
        #expect(policy.files == files)
        #expect(policy.rules.allSatisfy { files.contains($0.location?.file ?? "") })
        // A drop-in follows the default: its ALSA class hints, which a copied focus.toml had lost, are there.
        #expect(policy.rules.contains { $0.name == "ALSA class hint: navigation" })
    }

    @Test func defaultClassesAsDocumented() throws {
        let classes = Policy.embeddedDefault.classes
        let expected: [(String, InterruptionKind, Int, Set<String>)] = [
            ("primary", .primary, 0, []),
            ("call", .call, 2, ["short", "navigation", "notification", "primary", "ambient"]),
            ("navigation", .short, 1, ["primary", "ambient"]),
            ("short", .short, 1, ["primary", "ambient"]),
            ("notification", .short, 1, ["primary", "ambient"]),
            ("ambient", .ambient, 0, []),
            ("mix", .mix, 0, []),
        ]
        for (name, kind, rank, outranks) in expected {
            let cls = try #require(classes[name])
            #expect(cls.kind == kind, "\(name)")
            #expect(cls.rank == rank, "\(name)")
            #expect(cls.outranks == outranks, "\(name)")
            #expect(cls.location?.file == "<embedded default>")
        }
        #expect(classes["primary"]?.grace == 1500)
        #expect(classes["navigation"].map { [$0.duckRamp, $0.restoreRamp] } == [300, 1000] as [Int])
        #expect(abs((classes["navigation"]?.duck.decibels ?? 0) + 20) < 1e-9)
        #expect(abs((classes["short"]?.duck.linear ?? 0) - 0.19953) < 1e-4)
        #expect(classes["notification"].map { [$0.duckRamp, $0.restoreRamp, $0.hold] } == [200, 600, 300] as [Int])
        #expect(abs((classes["notification"]?.duck.decibels ?? 0) + 6) < 1e-9)
    }

    // MARK: Classification

    struct Classified: CustomTestStringConvertible, Sendable {
        var properties: Properties
        var className: String
        var spoken = false
        var rule: String?
        var testDescription: String { properties.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " ") }
    }

    static let classified: [Classified] = [
        // PulseAudio's roles, then PipeWire's, in any case.
        .init(properties: ["media.role": "phone"], className: "call", rule: "calls"),
        .init(properties: ["media.role": "Communication"], className: "call", rule: "calls"),
        .init(properties: ["media.role": "PHONE"], className: "call", rule: "calls"),
        .init(properties: ["media.role": "Navigation"], className: "navigation", rule: "navigation"),
        .init(properties: ["media.role": "Alert"], className: "notification", rule: "notifications"),
        .init(properties: ["media.role": "Emergency"], className: "navigation", rule: "emergency alerts"),
        .init(properties: ["media.role": "Assistant"], className: "short", rule: "assistants"),
        .init(properties: ["media.role": "a11y"], className: "speech", rule: "accessibility"),
        .init(properties: ["media.role": "Accessibility"], className: "speech", rule: "accessibility"),
        .init(properties: ["media.role": "event"], className: "notification", rule: "notifications"),
        .init(properties: ["media.role": "Notification"], className: "notification", rule: "notifications"),
        .init(properties: ["media.role": "animation"], className: "notification", rule: "notifications"),
        .init(properties: ["media.role": "production"], className: "mix", rule: "infrastructure"),
        .init(properties: ["media.role": "test"], className: "mix", rule: "infrastructure"),
        // What real apps send (../shared/REAL-APPS.md).
        .init(properties: ["media.role": "filter"], className: "mix", rule: "infrastructure"),
        .init(properties: ["media.role": "Loopback"], className: "mix", rule: "infrastructure"),
        .init(properties: ["media.role": "DSP"], className: "mix", rule: "infrastructure"),
        .init(properties: ["application.name": "WEBRTC VoiceEngine", "application.process.binary": "Discord",
                           "media.name": "playStream"], className: "call", rule: "call engines"),
        .init(properties: ["application.name": "ZOOM VoiceEngine", "application.process.binary": "zoom",
                           "media.name": "playStream"], className: "call", rule: "call engines"),
        .init(properties: ["application.name": "Chromium", "media.name": "Playback", "recording": "yes"],
              className: "call", rule: "apps recording from a microphone"),
        .init(properties: ["application.name": "Chromium", "media.name": "Playback", "recording": "no"],
              className: "ambient", rule: nil),
        // Media: an app with a player (the daemon's pseudo-property `player`), a media role, a media player.
        .init(properties: ["application.name": "Chromium", "media.name": "Playback",
                           "player": "org.mpris.MediaPlayer2.chromium.instance42"],
              className: "primary", rule: "media players"),
        .init(properties: ["application.name": "mpv"], className: "primary", rule: "media player apps"),
        .init(properties: ["application.process.binary": "mpg123"], className: "primary", rule: "media player apps"),
        .init(properties: ["pipewire.access.portal.app_id": "org.videolan.VLC"], className: "primary",
              rule: "media player apps"),
        .init(properties: ["application.name": "Spotify", "media.role": "music"], className: "primary",
              rule: "media roles"),
        // Games mix: SDL and OpenAL Soft tag every app `Game`; Proton sends no name at all.
        .init(properties: ["media.role": "Game", "application.name": "SDL Application"], className: "ambient"),
        .init(properties: ["media.role": "game"], className: "ambient"),
        .init(properties: ["application.name": "", "application.process.binary": "wine64-preloader"],
              className: "ambient"),
        .init(properties: ["application.name": "speech-dispatcher-espeak-ng", "application.process.binary": "sd_espeak-ng",
                           "media.name": "playback"], className: "speech", rule: "screen readers"),
        .init(properties: ["application.name": "speech-dispatcher-dummy"], className: "speech", rule: "screen readers"),
        .init(properties: ["application.name": "eSpeak", "media.name": "Text-to-Speech"], className: "speech",
              rule: "screen readers"),
        .init(properties: ["application.name": "Mutter", "media.role": "event", "event.id": "message-new-instant"],
              className: "notification", rule: "event sounds"),
        .init(properties: ["application.name": "ALSA plug-in [canberra-gtk-play]", "event.id": "bell-window-system"],
              className: "notification", rule: "event sounds"),
        .init(properties: ["application.name": "Firefox", "application.process.binary": "firefox-esr",
                           "media.name": "AudioStream"], className: "ambient", rule: nil),
        .init(properties: ["media.role": "podcast"], className: "primary", spoken: true, rule: "spoken roles"),
        .init(properties: ["media.role": "music"], className: "primary", rule: "media roles"),
        .init(properties: ["media.role": "Music"], className: "primary", rule: "media roles"),
        .init(properties: ["media.role": "video"], className: "primary", rule: "media roles"),
        .init(properties: ["media.role": "Movie"], className: "primary", rule: "media roles"),
        // ALSA with no sound server: the PCM's class hint (`alsa.class`) names the class, before any other rule
        // (espeak-ng on audiopolicy_navigation is a prompt, not a screen reader).
        .init(properties: ["alsa.class": "navigation", "application.process.binary": "espeak-ng"],
              className: "navigation", rule: "ALSA class hint: navigation"),
        .init(properties: ["alsa.class": "notification"], className: "notification", rule: "ALSA class hint: notification"),
        .init(properties: ["alsa.class": "short"], className: "short", rule: "ALSA class hint: short"),
        .init(properties: ["alsa.class": "speech"], className: "speech", rule: "ALSA class hint: speech"),
        .init(properties: ["alsa.class": "call"], className: "call", rule: "ALSA class hint: call"),
        .init(properties: ["alsa.class": "primary"], className: "primary", rule: "ALSA class hint: primary"),
        .init(properties: ["alsa.class": "music"], className: "primary", rule: "ALSA class hint: primary"),
        .init(properties: ["alsa.class": "ambient", "application.name": "mpv"], className: "ambient",
              rule: "ALSA class hint: ambient"),
        .init(properties: ["alsa.class": "mix"], className: "mix", rule: "ALSA class hint: mix"),
        .init(properties: ["alsa.class": "karaoke", "application.process.binary": "aplay"], className: "ambient"),
        // No role, or an unknown one, and no player: the default class, no rule.
        .init(properties: ["application.name": "Firefox"], className: "ambient"),
        .init(properties: ["media.role": "karaoke"], className: "ambient"),
        .init(properties: [:], className: "ambient"),
        // The `app` pseudo-key, through each of its properties.
        .init(properties: ["application.name": "gPodder"], className: "primary", spoken: true,
              rule: "podcast and audiobook players"),
        .init(properties: ["application.process.binary": "kasts"], className: "primary", spoken: true,
              rule: "podcast and audiobook players"),
        .init(properties: ["application.id": "com.github.geigi.cozy"], className: "primary", spoken: true,
              rule: "podcast and audiobook players"),
        .init(properties: ["pipewire.access.portal.app_id": "org.gnome.Podcasts"], className: "primary",
              spoken: true, rule: "podcast and audiobook players"),
        .init(properties: ["application.name": "Audiobookshelf"], className: "primary", spoken: true,
              rule: "podcast and audiobook players"),
        // First match wins: a podcast app's notification is a notification; its music role is still spoken.
        .init(properties: ["application.name": "Kasts", "media.role": "event"], className: "notification",
              rule: "notifications"),
        .init(properties: ["application.name": "Kasts", "media.role": "music"], className: "primary", spoken: true,
              rule: "podcast and audiobook players"),
    ]

    @Test(arguments: classified)
    func classifiesWithTheDefault(_ c: Classified) {
        let result = Policy.embeddedDefault.classify(c.properties)
        #expect(result.interruptionClass.name == c.className)
        #expect(result.spoken == c.spoken)
        #expect(result.rule?.name == c.rule)
    }

    @Test func firstMatchWinsAndAllMatchersMustMatch() throws {
        let policy = try PolicyLoader.load(text: """
            [class.primary]
            [class.short]
            above = ["primary"]

            [[rule]]
            match = { "media.role" = "music", app = "spotify" }
            class = "short"

            [[rule]]
            name = "music"
            match.'media.role' = ["mus?c", "[mv]ideo"]
            class = "primary"
            spoken = true
            """, file: "p.toml")
        let both = policy.classify(["media.role": "Music", "application.process.binary": "Spotify"])
        #expect(both.interruptionClass.name == "short")
        #expect(both.rule?.location == AudioPolicy.SourceLocation(file: "p.toml", line: 5, column: 1))
        #expect(both.reason == "rule at p.toml:5")
        let roleOnly = policy.classify(["media.role": "music"])
        #expect(roleOnly.interruptionClass.name == "primary")
        #expect(roleOnly.spoken)
        #expect(roleOnly.reason == "rule \"music\" (p.toml:9)")
        #expect(policy.classify(["media.role": "video"]).rule?.name == "music")
        #expect(policy.classify(["media.role": "videos"]).rule == nil)
    }

    // MARK: Classes

    /// Focus is opt-in: the default acts on it nowhere; focus.toml ducks games only, and a rule's
    /// `unfocused` wins over its class's.
    @Test func unfocusedIsOptIn() throws {
        #expect(!Policy.embeddedDefault.actsOnFocus)
        #expect(Policy.embeddedDefault.classes.values.allSatisfy { $0.unfocused == .nothing })
        let focus = try PolicyLoader.load(text: policyText("focus.toml"), file: "focus.toml")
        #expect(focus.actsOnFocus)
        #expect(focus.classes["ambient"]?.unfocused == .duck)
        #expect(focus.classes["ambient"].map { abs($0.unfocusedDuck.decibels + 12) < 0.01 } == true)
        #expect(focus.classes.values.filter { $0.unfocused != .nothing }.map(\.name) == ["ambient"])
        let ruled = try PolicyLoader.load(text: """
            [class.primary]
            unfocused = "duck"
            [[rule]]
            match = { app = "x" }
            class = "primary"
            unfocused = "nothing"
            """, file: "p.toml")
        #expect(ruled.rules.first?.unfocused == .nothing)
        #expect(ruled.classes["primary"]?.unfocused == .duck)
    }

    /// Pausing the Now Playing app when its last window closes is opt-in: the default says `nothing`
    /// everywhere; a class says `pause`, and a rule's `closed-window` wins over its class's; a wrong
    /// value is an error at its place.
    @Test func closedWindowIsOptIn() throws {
        #expect(Policy.embeddedDefault.classes.values.allSatisfy { $0.closedWindow == .nothing })
        #expect(Policy.embeddedDefault.rules.allSatisfy { $0.closedWindow == nil })
        let ruled = try PolicyLoader.load(text: """
            [class.primary]
            closed-window = "pause"
            [[rule]]
            match = { app = "rhythmbox" }
            class = "primary"
            closed-window = "nothing"
            """, file: "p.toml")
        #expect(ruled.classes["primary"]?.closedWindow == .pause)
        #expect(ruled.rules.first?.closedWindow == ClosedWindowAction.nothing)
        #expect(ruled.classes["primary"]?.origins["closed-window"] == SourceLocation(file: "p.toml", line: 2, column: 17))
        #expect(errors("[class.primary]\nclosed-window = \"paused\"\n")
            == ["2:17: unknown `closed-window` \"paused\" (did you mean \"pause\"?); one of: pause, nothing"])
        #expect(errors("[class.primary]\n[[rule]]\nmatch = { app = \"x\" }\nclass = \"primary\"\nclosed-window = true\n").count == 1)
    }

    @Test func aboveIsTransitiveAndRankIsTheLongestPathBelow() throws {
        let policy = try PolicyLoader.load(text: """
            [class.primary]
            [class.low]
            kind = "short"
            above = ["primary"]
            [class.mid]
            kind = "short"
            above = ["low"]
            [class.call]
            above = ["mid", "primary", "primary"]
            [class.mix]
            """, file: "p.toml")
        let classes = policy.classes
        #expect(classes["call"]?.outranks == ["mid", "low", "primary"])
        #expect(classes["mid"]?.outranks == ["low", "primary"])
        #expect(classes["low"]?.outranks == ["primary"])
        #expect(classes["primary"]?.outranks == [])
        #expect(["primary", "low", "mid", "call", "mix"].map { classes[$0]?.rank } == [0, 1, 2, 3, 0])
        #expect(classes["mid"]?.location == AudioPolicy.SourceLocation(file: "p.toml", line: 5, column: 1))
    }

    @Test func classDefaultsAndValueForms() throws {
        let policy = try PolicyLoader.load(text: """
            [defaults]
            class = "music"
            mute-fade = "1.5s"
            [class.music]
            kind = "primary"
            [class.short]
            duck = 0.5
            duck-ramp = "250ms"
            restore-ramp = "2 s"
            hold = 0
            grace = "0.25s"
            [class.quiet]
            kind = "short"
            duck = "-60dB"
            [class.none]
            kind = "short"
            duck = "0 dB"
            """, file: "p.toml")
        #expect(policy.defaultClass == "music")
        #expect(policy.muteFade == 1500)
        let music = try #require(policy.classes["music"])
        #expect([music.grace, music.duckRamp, music.restoreRamp, music.hold] == [1500, 500, 1000, 500] as [Int])
        #expect(abs(music.duck.decibels + 14) < 1e-9)
        let short = try #require(policy.classes["short"])
        #expect(short.kind == .short)
        #expect([short.grace, short.duckRamp, short.restoreRamp, short.hold] == [250, 250, 2000, 0] as [Int])
        #expect(short.duck.linear == 0.5)
        #expect(abs((policy.classes["quiet"]?.duck.decibels ?? 0) + 60) < 1e-9)
        #expect(policy.classes["none"]?.duck.linear == 1)
    }

    // MARK: Errors

    struct Bad: CustomTestStringConvertible, Sendable {
        var name: String
        var text: String
        var errors: [String]
        var testDescription: String { name }
    }

    static let bad: [Bad] = [
        Bad(name: "a rule for captures naming a primary class", text: """
            [class.primary]
            [[rule]]
            match = { capture = "yes", app = "parecord" }
            class = "primary"
            """, errors: [
                "4:9: class \"primary\" is of kind primary, which a rule for captures (`capture` in `match`) cannot name; use a class of kind short (ducks) or call (pauses and resumes)",
            ]),
        Bad(name: "unknown class key", text: """
            [class.primary]
            gracee = 100
            """, errors: [
                "2:1: unknown key `gracee` in [class.primary] (did you mean `grace`?); allowed keys: kind, above, grace, duck, duck-ramp, restore-ramp, hold, release-after, on-output-loss, unfocused, unfocused-duck, closed-window",
            ]),
        Bad(name: "unknown top-level table", text: """
            [classes.primary]
            """, errors: [
                "1:1: no class \"primary\" for streams no rule matches; define [class.primary] or set `class` in [defaults]",
                "1:2: unknown key `classes` in the policy (did you mean `class`?); allowed keys: defaults, class, rule, outputs, audibility, drop-in",
            ]),
        Bad(name: "unknown key in a rule and in defaults", text: """
            [defaults]
            mute_fade = 1
            [class.primary]
            [[rule]]
            match = { app = "x" }
            class = "primary"
            spoke = true
            """, errors: [
                "2:1: unknown key `mute_fade` in [defaults] (did you mean `mute-fade`?); allowed keys: class, mute-fade, pause-timeout",
                "7:1: unknown key `spoke` in [[rule]] (did you mean `spoken`?); allowed keys: name, match, class, spoken, unfocused, closed-window",
            ]),
        Bad(name: "duration of the wrong type", text: """
            [class.primary]
            grace = true
            duck-ramp = 1.5
            """, errors: [
                "2:9: `grace` must be a duration in ms (integer) or a string like \"1.5s\", got boolean",
                "3:13: `duck-ramp` must be a duration in ms (integer) or a string like \"1.5s\", got float",
            ]),
        Bad(name: "duration strings", text: """
            [class.primary]
            grace = "1500"
            hold = -5
            restore-ramp = "-1s"
            """, errors: [
                "2:9: `grace` must be a duration in ms (integer) or a string like \"1.5s\", got \"1500\"",
                "3:8: `hold` must not be negative, got -5",
                "4:16: `restore-ramp` must be a duration in ms (integer) or a string like \"1.5s\", got \"-1s\"",
            ]),
        Bad(name: "levels out of range or malformed", text: """
            [class.primary]
            duck = "-70 dB"
            [class.short]
            duck = 1.5
            [class.call]
            duck = "loud"
            [class.mix]
            duck = 0
            """, errors: [
                "2:8: `duck` must be between -60 dB and 0 dB, got \"-70 dB\"",
                "4:8: `duck` as a linear factor must be above 0 and at most 1, got 1.5",
                "6:8: `duck` must be a level in dB like \"-14 dB\" or a linear factor like 0.2, got \"loud\"",
                "8:8: `duck` as a linear factor must be above 0 and at most 1, got 0",
            ]),
        Bad(name: "positive dB", text: """
            [class.primary]
            duck = "+3 dB"
            """, errors: ["2:8: `duck` must be between -60 dB and 0 dB, got \"+3 dB\""]),
        Bad(name: "unknown kind", text: """
            [class.primary]
            [class.nav]
            kind = "shrot"
            """, errors: [
                "3:8: unknown kind \"shrot\" (did you mean \"short\"?); kinds: primary, call, short, ambient, mix",
            ]),
        Bad(name: "kind of the wrong type", text: """
            [class.primary]
            kind = 1
            """, errors: ["2:8: `kind` must be a string, got integer"]),
        Bad(name: "missing kind", text: """
            [class.primary]

            [class.nav]
            duck = "-20 dB"
            """, errors: ["3:1: class \"nav\" needs a `kind`: primary, call, short, ambient or mix"]),
        Bad(name: "class that is not a table", text: """
            class.primary = "primary"
            """, errors: [
                "1:1: no class \"primary\" for streams no rule matches; define [class.primary] or set `class` in [defaults]",
                "1:17: `primary` must be a table like [class.primary], got string",
            ]),
        Bad(name: "unknown class in a rule", text: """
            [class.primary]
            [class.short]
            [[rule]]
            match = { "media.role" = "x" }
            class = "shortt"
            """, errors: [
                "5:9: unknown class \"shortt\" (did you mean \"short\"?); defined classes: primary, short",
            ]),
        Bad(name: "unknown default class", text: """
            [defaults]
            class = "main"
            [class.primary]
            """, errors: ["2:9: unknown class \"main\"; defined classes: primary"]),
        Bad(name: "no classes at all", text: """
            [defaults]
            class = "primary"
            """, errors: ["2:9: unknown class \"primary\"; no classes are defined"]),
        Bad(name: "unknown class in above", text: """
            [class.primary]
            [class.call]
            above = ["primary", "nope", 3]
            """, errors: [
                "3:21: unknown class \"nope\"; defined classes: call, primary",
                "3:29: `above` must list class names (strings), got integer",
            ]),
        Bad(name: "above that is not an array", text: """
            [class.primary]
            [class.call]
            above = "primary"
            """, errors: ["3:9: `above` must be an array of class names, got string"]),
        Bad(name: "priority cycle", text: """
            [class.primary]
            [class.call]
            above = ["short"]
            [class.short]
            above = ["call", "primary"]
            """, errors: ["3:1: priority cycle: call > short > call"]),
        Bad(name: "class above itself", text: """
            [class.primary]
            above = ["primary"]
            """, errors: ["2:1: priority cycle: primary > primary"]),
        Bad(name: "long cycle", text: """
            [class.primary]
            [class.a]
            kind = "short"
            above = ["b"]
            [class.b]
            kind = "short"
            above = ["c"]
            [class.c]
            kind = "short"
            above = ["primary", "a"]
            """, errors: ["4:1: priority cycle: a > b > c > a"]),
        Bad(name: "rule without match or class", text: """
            [class.primary]

            [[rule]]
            class = "primary"

            [[rule]]
            name = "no class"
            match = { app = "x" }

            [[rule]]
            spoken = true
            """, errors: [
                "3:1: rule has no `match`",
                "6:1: rule has no `class`",
                "10:1: rule has no `match`",
                "10:1: rule has no `class`",
            ]),
        Bad(name: "empty match", text: """
            [class.primary]
            [[rule]]
            match = {}
            class = "primary"
            """, errors: ["3:9: `match` is empty; a rule needs at least one property to match"]),
        Bad(name: "match with a dotted key", text: """
            [class.primary]
            [[rule]]
            match = { media.role = "music" }
            class = "primary"
            """, errors: [
                "3:11: `media` in `match` is a table; quote property names that contain dots, as in \"media.role\" = \"music\"",
            ]),
        Bad(name: "match values of the wrong type", text: """
            [class.primary]
            [[rule]]
            match = { "media.role" = ["music", 1], app = [], x = true }
            class = "primary"
            [[rule]]
            match = "music"
            class = "primary"
            """, errors: [
                "3:36: `match` patterns must be strings, got integer",
                "3:46: no patterns for `app` in `match`; an empty array matches nothing",
                "3:54: `match` values must be a glob or an array of globs, got boolean",
                "6:9: `match` must be a table like { \"media.role\" = \"music\" }, got string",
            ]),
        Bad(name: "rule fields of the wrong type", text: """
            [class.primary]
            [[rule]]
            name = 1
            match = { app = "x" }
            class = ["primary"]
            spoken = "yes"
            """, errors: [
                "3:8: `name` must be a string, got integer",
                "5:9: `class` must be a string, got array",
                "6:10: `spoken` must be true or false, got string",
            ]),
        Bad(name: "unfocused values", text: """
            [class.primary]
            unfocused = "duk"
            unfocused-duck = "loud"
            [[rule]]
            match = { app = "x" }
            class = "primary"
            unfocused = true
            [[rule]]
            match = { app = "y" }
            class = "primary"
            unfocused = "pause"
            """, errors: [
                "2:13: unknown `unfocused` \"duk\" (did you mean \"duck\"?); one of: duck, mute, nothing",
                "3:18: `unfocused-duck` must be a level in dB like \"-14 dB\" or a linear factor like 0.2, got \"loud\"",
                "7:13: `unfocused` must be a string, got boolean",
                "11:13: unknown `unfocused` \"pause\"; one of: duck, mute, nothing",
            ]),
        Bad(name: "rule as a table", text: """
            [class.primary]
            [rule]
            class = "primary"
            """, errors: ["2:1: `rule` must be an array of tables, written [[rule]], got table"]),
        Bad(name: "syntax error", text: """
            [class.primary]
            grace = 1500
            duck = -14 dB
            """, errors: ["3:12: syntax error in key-value pair: expected a comment or whitespace, saw 'd'"]),
        Bad(name: "duplicate key", text: """
            [class.primary]
            grace = 1
            grace = 2
            """, errors: ["3:9: syntax error in key-value pair: cannot redefine existing integer 'grace'"]),
    ]

    @Test(arguments: bad)
    func rejects(_ c: Bad) {
        #expect(errors(c.text) == c.errors)
    }

    @Test func reportsEveryErrorInFileOrderWithTheFile() throws {
        let text = """
            [defaults]
            class = "musik"

            [class.primary]
            grace = "soon"

            [class.short]
            above = ["primary"]
            duck = "-80 dB"

            [[rule]]
            match = { "media.role" = "music" }
            class = "primry"
            """
        #expect(throws: LocatedErrors.self) { try PolicyLoader.load(text: text, file: "my/policy.toml") }
        do {
            _ = try PolicyLoader.load(text: text, file: "my/policy.toml")
        } catch {
            #expect(error.description == """
                my/policy.toml:2:9: unknown class "musik"; defined classes: primary, short
                my/policy.toml:5:9: `grace` must be a duration in ms (integer) or a string like "1.5s", got "soon"
                my/policy.toml:9:8: `duck` must be between -60 dB and 0 dB, got "-80 dB"
                my/policy.toml:13:9: unknown class "primry" (did you mean "primary"?); defined classes: primary, short
                """)
        }
    }

    /// A huge value is quoted only in part: the error stays a line a person can read (a fuzzed policy
    /// with a 60 KB value once made `check` write more than a pipe holds).
    @Test func aHugeValueIsQuotedOnlyInPart() throws {
        let value = String(repeating: "é", count: 100_000)
        let found = errors("[class.primary]\nduck = \"\(value)\"\n")
        #expect(found.count == 1)
        let message = try #require(found.first)
        #expect(message.hasPrefix("2:8: `duck` must be a level in dB like"), "\(message.prefix(80))")
        #expect(message.count < LocatedError.longestMessage + 60, "\(message.count) characters")
        #expect(message.hasSuffix("more characters)"), "\(message.suffix(80))")
        // The control: a short value is quoted whole, with nothing cut.
        let short = errors("[class.primary]\nduck = \"loud\"\n")
        #expect(short.first?.hasSuffix("got \"loud\"") == true, "\(short)")
    }

    /// A line break other than LF and CR quoted in an error (NEL, U+0085, which toml++ quotes as what it
    /// "saw"; the line and paragraph separators) is escaped: regular expressions and some terminals break
    /// lines at it. A fuzzed policy found it.
    @Test(arguments: ["\u{85}", "\u{2028}", "\u{2029}"])
    func unicodeLineBreaksAreEscaped(_ brk: String) throws {
        let found = errors("[class.primary]\n\(brk)# x\n")
        let message = try #require(found.first)
        #expect(!message.unicodeScalars.contains { $0 == brk.unicodeScalars.first! }, "\(message.debugDescription)")
        #expect(message.wholeMatch(of: /[0-9]+:[0-9]+: .*/) != nil, "\(message.debugDescription)")
        #expect(message.contains("\\u{"), "\(message.debugDescription)")
    }

    @Test func minimalPolicy() throws {
        let policy = try PolicyLoader.load(text: "[class.primary]\n", file: "min.toml")
        #expect(policy.rules.isEmpty)
        #expect(policy.defaultClass == "primary")
        #expect(policy.classify(["media.role": "phone"]).interruptionClass.name == "primary")
    }
}
