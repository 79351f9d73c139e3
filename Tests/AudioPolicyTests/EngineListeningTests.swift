import Testing
@testable import AudioPolicy

/// One case of an app that listens: the policy's capture rule, a recording, what its app plays meanwhile,
/// and what becomes of the music (app `mpv`, with a player) while it records and once it has stopped.
struct ListeningCase: Sendable, CustomTestStringConvertible {
    var name: String
    /// The kind of the class the capture rule names.
    var kind: InterruptionKind = .short
    /// The capture rule's match (besides `capture = "yes"`); nil: no capture rule at all.
    var captureRule: [String: String]? = ["app": "parecord"]
    /// A rule for playback (no `capture` key) naming the class `listening` too.
    var playbackRule: [String: String]? = nil
    /// The recording's app.
    var recorder: Properties = ["application.name": "parecord", "application.process.id": "4004"]
    /// A stream of the recorder's own app plays from 3000 to 5000 ms (class mix: role `test`).
    var recorderPlays = false
    /// The music at 2500 ms (recording since 2000) and at 4500 ms; it stops at 6000 ms.
    var during: (StreamState, Double)
    var whileItPlays: (StreamState, Double)? = nil
    var testDescription: String { name }

    var policy: Policy {
        var policy = TestPolicy.standard
        policy.classes["listening"] = InterruptionClass(name: "listening", kind: kind, outranks: ["primary"], rank: 1,
                                                        duck: Level(decibels: -20), duckRamp: 300, restoreRamp: 1000,
                                                        hold: 500)
        func rule(_ match: [String: String]) -> Rule {
            Rule(matchers: match.sorted { $0.key < $1.key }.map { PropertyMatcher(key: $0.key, patterns: [Glob($0.value)]) },
                 className: "listening")
        }
        if let captureRule { policy.rules.insert(rule(captureRule.merging(["capture": "yes"]) { $1 }), at: 0) }
        if let playbackRule { policy.rules.insert(rule(playbackRule), at: 0) }
        return policy
    }
}

@Suite("Engine: apps that listen (a capture a rule names interrupts while it records)")
struct EngineListeningTests {
    static let cases: [ListeningCase] = [
        ListeningCase(name: "a named recorder ducks the music while it records", during: (.ducked, duck20)),
        ListeningCase(name: "a listening class of kind call pauses the music while it records", kind: .call,
                      during: (.paused, 1)),
        ListeningCase(name: "a recorder no capture rule names leaves the music alone",
                      recorder: ["application.name": "obs", "application.process.id": "5005"], during: (.playing, 1)),
        ListeningCase(name: "no capture rule: the default class (primary here) never applies to a capture",
                      captureRule: nil, during: (.playing, 1)),
        ListeningCase(name: "a playback rule naming the recorder does not classify its capture",
                      captureRule: nil, playbackRule: ["app": "parecord"], during: (.playing, 1)),
        ListeningCase(name: "a capture rule naming a class that interrupts nobody (ambient) does nothing",
                      kind: .ambient, during: (.playing, 1)),
        ListeningCase(name: "a recorder whose app plays is no listener while it plays", recorderPlays: true,
                      during: (.ducked, duck20), whileItPlays: (.playing, 1)),
    ]

    @Test(arguments: cases)
    func listening(_ c: ListeningCase) {
        var h = EngineHarness(policy: c.policy)
        h.at(0, music("mpv"))
        h.at(2000, .capture("mic", c.recorder))
        #expect(h.state("mpv", at: 2500) == c.during.0)
        #expect(abs(h.factor("mpv", at: 2500)! - c.during.1) < 0.001)
        if c.recorderPlays {
            h.at(3000, .streamStarted("beep", c.recorder.merging(["media.role": "test"]) { $1 }, player: nil))
            #expect(h.state("mpv", at: 4500) == c.whileItPlays?.0)
            #expect(abs(h.factor("mpv", at: 4500)! - (c.whileItPlays?.1 ?? 0)) < 0.001)
            h.at(5000, .streamEnded("beep"))
            #expect(h.state("mpv", at: 5500) == c.during.0)
        }
        #expect(h.engine.nowPlayingOwner == "mpv", "a recording never takes Now Playing")
        h.at(6000, .captureEnded("mic"))
        // The class's hold (500 ms), then its restore (1 s); a pause is resumed after the hold.
        #expect(h.state("mpv", at: 7500) == .playing)
        #expect(h.factor("mpv", at: 7500) == 1)
        #expect(h.engine.snapshot(at: 7500).map(\.id) == ["mpv"], "the recording's interruption lingers")
    }

    @Test("a policy reload that drops the capture rule ends the interruption; one that adds it starts it")
    func reloadFollowsTheRules() {
        let listening = ListeningCase(name: "", during: (.ducked, duck20)).policy
        var h = EngineHarness(policy: listening)
        h.at(0, music("mpv"))
        h.at(2000, .capture("mic", ["application.name": "parecord"]))
        #expect(h.state("mpv", at: 2500) == .ducked)
        _ = h.engine.handle(.policyReplaced(TestPolicy.standard), at: 3000)
        #expect(h.factor("mpv", at: 4500) == 1)
        _ = h.engine.handle(.policyReplaced(listening), at: 5000)
        #expect(h.state("mpv", at: 5500) == .ducked)
    }

    @Test("a recording engine's prelude brings the capture back once, not also as a hook's interruption")
    func preludeHasTheCaptureOnce() {
        var h = EngineHarness(policy: ListeningCase(name: "", during: (.ducked, duck20)).policy)
        h.at(0, music("mpv"))
        h.at(2000, .capture("mic", ["application.name": "parecord"]))
        let prelude = h.engine.prelude(at: 3000).map(\.event)
        #expect(prelude.filter { if case .capture("mic", _, _, _) = $0 { true } else { false } }.count == 1)
        #expect(!prelude.contains { if case .interruptionBegan = $0 { true } else { false } })
        var replay = Engine(policy: h.engine.policy)
        for event in prelude { _ = replay.handle(event, at: 3000) }
        #expect(replay.state(of: "mpv", at: 3500) == .ducked)
    }

    @Test("capture = yes rules classify captures only: a playback stream of the recorder's app is not in them")
    func captureRulesSkipPlayback() {
        let policy = ListeningCase(name: "", during: (.ducked, duck20)).policy
        #expect(policy.classifyCapture(["application.name": "parecord"])?.interruptionClass.name == "listening")
        #expect(policy.classifyCapture(["application.name": "obs"]) == nil)
        var h = EngineHarness(policy: policy)
        h.at(0, stream("own", role: nil, app: "parecord"))
        #expect(h.engine.snapshot(at: 0).first?.className == "primary")
    }
}
