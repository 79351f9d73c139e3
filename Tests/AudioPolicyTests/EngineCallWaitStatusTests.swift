@testable import AudioPolicy
import Testing

/// `status` shows a hook's request that waits for the call (``Engine/snapshot(at:)``): it is listed as
/// `waiting` while the call lasts, then as the interruption it became.
@Suite("Engine: requests waiting for the call in the snapshot")
struct EngineCallWaitStatusTests {
    static let phone: Properties = ["media.role": "phone", "application.name": "Signal"]
    static let reminder: Properties = ["application.name": "reminder"]

    @Test("a request made during a call is listed as waiting, with its class and app, until the call ends; then as the interruption it began")
    func waitingRequestIsListed() {
        var h = EngineHarness()
        h.at(0, .streamStarted("call", Self.phone, player: nil))
        h.at(1000, .interruptionAfterCall(token: "hook-1", className: "short", Self.reminder))
        let waiting = h.engine.snapshot(at: 1500).first { $0.id == "hook-1" }
        #expect(waiting?.state == .waiting)
        #expect(waiting?.isHook == true && waiting?.className == "short" && waiting?.application == "reminder")
        #expect(waiting?.factor == 1 && waiting?.muted == false)
        h.at(2000, .streamEnded("call"))
        let began = h.engine.snapshot(at: 2500).first { $0.id == "hook-1" }
        #expect(began?.state == .playing && began?.isHook == true)
        #expect(h.engine.snapshot(at: 2500).filter { $0.id == "hook-1" }.count == 1)
    }

    @Test("control: with no call on, the request begins at once and is never listed as waiting; withdrawn, it is gone")
    func noCallNoWaiting() {
        var h = EngineHarness()
        h.at(0, .interruptionAfterCall(token: "hook-1", className: "short", Self.reminder))
        #expect(h.engine.snapshot(at: 500).first { $0.id == "hook-1" }?.state == .playing)
        var waiting = EngineHarness()
        waiting.at(0, .streamStarted("call", Self.phone, player: nil))
        waiting.at(1000, .interruptionAfterCall(token: "hook-1", className: "short", Self.reminder))
        waiting.at(1500, .interruptionEnded(token: "hook-1"))
        #expect(!waiting.engine.snapshot(at: 2000).contains { $0.id == "hook-1" })
    }
}
