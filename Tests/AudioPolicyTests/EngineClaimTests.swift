@testable import AudioPolicy
import Testing

@Suite("Engine: Now Playing claimed by a hook")
struct EngineClaimTests {
    static let hookPlayer = PlayerID("hook:1")

    @Test("a claim takes Now Playing at once and pauses or ducks nothing")
    func claimTakesNowPlaying() {
        var h = EngineHarness()
        h.at(0, music("mpv"))
        h.advance(to: 2000)
        #expect(h.engine.nowPlayingOwner == "mpv")
        let out = h.at(3000, .nowPlayingClaimed("claim-1", ["application.name": "radio"], player: Self.hookPlayer))
        #expect(out == [.nowPlaying("claim-1")])
        #expect(h.engine.nowPlayingOwner == "claim-1")
        #expect(h.state("mpv", at: 5000) == .playing)
        #expect(h.factor("mpv", at: 5000) == 1)
    }

    @Test("the claim ends with the hook's player; the previous owner takes Now Playing back")
    func claimEndsWithItsPlayer() {
        var h = EngineHarness()
        h.at(0, music("mpv"))
        h.advance(to: 2000)
        h.at(3000, .nowPlayingClaimed("claim-1", ["application.name": "radio"], player: Self.hookPlayer))
        let out = h.at(4000, .playerGone(Self.hookPlayer))
        #expect(out == [.nowPlaying("mpv")])
        #expect(h.engine.nowPlayingOwner == "mpv")
    }

    @Test("another app's music past its grace takes Now Playing from a claim")
    func laterPrimaryWins() {
        var h = EngineHarness()
        h.at(0, .nowPlayingClaimed("claim-1", ["application.name": "radio"], player: Self.hookPlayer))
        h.at(1000, music("spotify"))
        #expect(h.engine.nowPlayingOwner == "claim-1")
        h.advance(to: 3000)
        #expect(h.engine.nowPlayingOwner == "spotify")
    }

    @Test("a claim by the app of a playing stream stands for that app: its own music does not pause it")
    func claimSharesTheAppOfItsStreams() {
        var h = EngineHarness()
        let properties: Properties = ["media.role": "music", "application.process.id": "42"]
        h.at(0, .streamStarted("s1", properties, player: nil))
        h.advance(to: 2000)
        h.at(2500, .nowPlayingClaimed("claim-1", ["application.process.id": "42"], player: Self.hookPlayer))
        #expect(h.engine.nowPlayingOwner == "claim-1")
        // The app's next stream replaces the claim as the one that stands for the app.
        h.at(3000, .streamStarted("s2", properties, player: nil))
        h.advance(to: 5000)
        #expect(h.engine.nowPlayingOwner == "s2")
        #expect(h.state("s1", at: 5000) == .playing)
    }
}
