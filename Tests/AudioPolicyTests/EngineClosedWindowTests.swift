@testable import AudioPolicy
import Testing

/// `closed-window`: what the engine decides, in words, when an app's last window closes. The fixtures in
/// Tests/Fixtures/focus/closed-window-* replay whole scenarios; these check the decisions' words and the
/// one command, each with its control.
@Suite("Engine: the Now Playing app's last window closes")
struct EngineClosedWindowTests {
    static let player = PlayerID("org.mpris.MediaPlayer2.mpv")
    static let window = AppIdentity(pid: 1001, name: "mpv")

    static func harness(_ action: ClosedWindowAction) -> EngineHarness {
        var policy = TestPolicy.standard
        policy.classes["primary"]?.closedWindow = action
        var h = EngineHarness(policy: policy)
        h.at(0, .streamStarted("music", ["media.role": "music", "application.process.id": "1001"], player: player))
        h.at(0, .focus(window))
        h.advance(to: 2000)
        return h
    }

    @Test("with closed-window = pause, its player is paused once, with the reason; it stays Now Playing")
    func pauses() {
        var h = Self.harness(.pause)
        #expect(h.engine.nowPlayingOwner == "music")
        let out = h.engine.handle(.lastWindowClosed(Self.window), at: 3000)
        #expect(out.filter { if case .pause = $0 { true } else { false } } == [.pause("music", Self.player)])
        let decisions = out.compactMap { if case let .decision(d) = $0 { d } else { nil } }
        #expect(decisions.map { "\($0.reason): \($0.action)" }
            == ["the Now Playing app's last window closed (class primary: closed-window = pause): paused indefinitely (stays Now Playing)"])
        #expect(decisions.first?.outcome == .paused)
        #expect(h.engine.nowPlayingOwner == "music")
    }

    @Test("control: the default plays on, and says so")
    func playsOn() {
        var h = Self.harness(.nothing)
        let out = h.engine.handle(.lastWindowClosed(Self.window), at: 3000)
        #expect(!out.contains { if case .pause = $0 { true } else { false } })
        #expect(out.compactMap { if case let .decision(d) = $0 { "\(d.reason): \(d.action)" } else { nil } }
            == ["the Now Playing app's last window closed: plays on (class primary: closed-window = nothing)"])
    }

    @Test("another app's last window, or a window that is not the last, pauses nothing (control: the last one does)")
    func onlyTheNowPlayingAppsLast() {
        var h = Self.harness(.pause)
        #expect(h.engine.handle(.lastWindowClosed(AppIdentity(pid: 5005, name: "game")), at: 3000)
            .allSatisfy { if case .pause = $0 { false } else { true } })
        #expect(h.engine.handle(.windowClosed(Self.window), at: 3100)
            .allSatisfy { if case .pause = $0 { false } else { true } })
        #expect(h.engine.handle(.lastWindowClosed(Self.window), at: 3200).contains(.pause("music", Self.player)))
    }
}
