@testable import AudioPolicy
import Testing

/// A stream the server started at one of our saved levels or mutes is put right by the engine's command
/// (``Command/putBack(_:level:unmute:)``), for what the engine's own decision about it left alone.
@Suite("Engine: a start at one of our saved levels or mutes is put back where the policy leaves it alone")
struct EngineSavedStartTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        /// Events before the start (at 0), then the start at 1000 and the news right after it.
        var before: [Event]
        var start: Event
        var levelAway: Bool
        var mutedByUs: Bool
        var expected: Command?
        /// What the engine does to it as it starts, besides (checked, so that each case is the one it says).
        var decided: StreamState = .playing
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "alone, started at our saved duck: its own level is written", before: [], start: music("mpv"),
             levelAway: true, mutedByUs: false, expected: .putBack("mpv", level: true, unmute: false)),
        Case(name: "alone, started at our saved mute: unmuted", before: [], start: music("mpv"),
             levelAway: false, mutedByUs: true, expected: .putBack("mpv", level: false, unmute: true)),
        Case(name: "alone, both", before: [], start: music("mpv"),
             levelAway: true, mutedByUs: true, expected: .putBack("mpv", level: true, unmute: true)),
        Case(name: "control: a start at its own level, not muted by us: nothing", before: [], start: music("mpv"),
             levelAway: false, mutedByUs: false, expected: nil),
        Case(name: "ducked as it starts (a prompt plays): the duck is written from its own level, not put back",
             before: [stream("maps", role: "navigation")], start: music("mpv"),
             levelAway: true, mutedByUs: false, expected: nil, decided: .ducked),
        Case(name: "ducked as it starts, our saved mute: unmuted, its level left to the duck",
             before: [stream("maps", role: "navigation")], start: music("mpv"),
             levelAway: true, mutedByUs: true, expected: .putBack("mpv", level: false, unmute: true), decided: .ducked),
        Case(name: "muted by the policy as it starts (a call, no player): the mute stays, the level too",
             before: [stream("call", role: "phone")], start: music("mpv", player: false),
             levelAway: true, mutedByUs: true, expected: nil, decided: .paused),
    ]

    @Test(arguments: cases)
    func putBack(_ c: Case) throws {
        var h = EngineHarness()
        for event in c.before { h.at(0, event) }
        h.at(1000, c.start)
        guard case let .streamStarted(id, _, _, _, _, _, _) = c.start else { throw Unexpected() }
        let out = h.at(1000, .startedAtOurSave(id, levelAway: c.levelAway, mutedByUs: c.mutedByUs))
        let putBacks = out.filter { if case .putBack = $0 { true } else { false } }
        #expect(putBacks == (c.expected.map { [$0] } ?? []), "\(h.commands(for: id))")
        #expect(h.engine.state(of: id, at: 1000) == c.decided)
    }

    @Test("a duck over (its restore ramp ended) leaves the level alone again; mid-restore it does not")
    func afterARestore() {
        var h = EngineHarness()
        h.at(0, music("mpv"))
        h.at(100, stream("maps", role: "navigation"))
        h.at(600, .streamEnded("maps"))
        // The navigation class holds 500 ms, then restores over 1000 ms.
        let during = h.at(1500, .startedAtOurSave("mpv", levelAway: true, mutedByUs: false))
        #expect(during.isEmpty, "\(h.commands(for: "mpv"))")
        let after = h.at(5000, .startedAtOurSave("mpv", levelAway: true, mutedByUs: false))
        #expect(after.contains(.putBack("mpv", level: true, unmute: false)), "\(h.commands(for: "mpv"))")
    }

    @Test("a stopping engine still puts a start back: it changes nothing, it gives the user's level back")
    func whileStopping() {
        var h = EngineHarness()
        h.at(0, .stop(fade: 200))
        h.at(1000, music("mpv"))
        let out = h.at(1000, .startedAtOurSave("mpv", levelAway: true, mutedByUs: true))
        #expect(out.contains(.putBack("mpv", level: true, unmute: true)))
    }

    @Test("news of a stream the engine does not know is ignored")
    func unknownStream() {
        var h = EngineHarness()
        #expect(h.at(0, .startedAtOurSave("gone", levelAway: true, mutedByUs: true)).isEmpty)
    }

    struct Unexpected: Error {}
}
