@testable import AudioPolicy
import Testing

/// A stream whose level the server told late (``Event/levelTold(_:muted:)``): the engine asks again for
/// what it asked meanwhile, from where the stream is now, and for nothing where it leaves it alone.
@Suite("Engine: a level told late restates the duck, fade or mute asked for meanwhile")
struct EngineLevelToldTests {
    /// Music ducked by a navigation prompt at 2000 (to −20 dB over 300 ms); its level told at `at`.
    private func ducked(toldAt at: Milliseconds) -> [Command] {
        var h = EngineHarness()
        h.at(0, music("mpv"))
        h.at(2000, stream("nav", role: "navigation"))
        return h.at(at, .levelTold("mpv", muted: false))
    }

    @Test("mid-duck: the rest of the ramp, from where the duck is now")
    func midRamp() throws {
        let out = ducked(toldAt: 2100)
        guard out.count == 1, case let .ramp(id, from, to, duration) = out[0] else {
            Issue.record("expected one ramp, got \(out)")
            return
        }
        #expect(id == "mpv")
        // A third of the way down in decibels: −6.7 dB.
        #expect(abs(from - 0.464) < 0.001, "from \(from)")
        #expect(abs(to - 0.1) < 0.001 && duration == 200)
    }

    @Test("after the duck's ramp: its factor, written at once")
    func steadyDuck() {
        let out = ducked(toldAt: 3000)
        #expect(out.count == 1)
        if case let .ramp(id, from, to, duration) = out.first {
            #expect(id == "mpv" && abs(from - 0.1) < 0.001 && from == to && duration == 0)
        } else {
            Issue.record("expected a ramp, got \(out)")
        }
    }

    @Test("control: a stream the policy leaves alone gets nothing")
    func alone() {
        var h = EngineHarness()
        h.at(0, music("mpv"))
        #expect(h.at(500, .levelTold("mpv", muted: false)).isEmpty)
        #expect(h.at(600, .levelTold("mpv", muted: true)).isEmpty)
    }

    @Test("the mute fallback's fade over: muted, unless it arrived muted")
    func fadedOut() {
        var h = EngineHarness()
        h.at(0, stream("call", role: "phone"))
        h.at(100, music("mpv", player: false))
        #expect(h.engine.isMuted("mpv"))
        let out = h.at(10_000, .levelTold("mpv", muted: false))
        #expect(out == [.mute("mpv", from: 0, fade: 0)], "\(out)")
        #expect(h.at(10_100, .levelTold("mpv", muted: true)).isEmpty)
    }

    @Test("a stopping engine restates nothing: its own fade-back runs in the shell")
    func whileStopping() {
        var h = EngineHarness()
        h.at(0, music("mpv"))
        h.at(2000, stream("nav", role: "navigation"))
        h.at(3000, .stop(fade: 200))
        #expect(h.at(3100, .levelTold("mpv", muted: false)).isEmpty)
    }

    @Test("news of a stream the engine does not know is ignored")
    func unknownStream() {
        var h = EngineHarness()
        #expect(h.at(0, .levelTold("gone", muted: false)).isEmpty)
    }
}
