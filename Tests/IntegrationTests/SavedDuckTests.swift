import AudioPolicy
import Foundation
import Testing

// The server saves our ducks: module-stream-restore (and WirePlumber on PipeWire) keeps every volume
// written to a stream as its role's or app's entry and gives it to the next stream of that key. A
// stream that starts while another of its key is ducked starts at that duck; the daemon must take the
// user's level under it for the stream's own, or it ducks it again from there and "restores" it to the
// duck (found by `audio-policyd soak` on PipeWire; reproduced on PulseAudio with paplay).

@Suite(
    "Saved ducks: a new stream the server starts at one of our ducks",
    .serialized,
    .disabled(if: TestEnvironment.soundServer == nil, "no sound server: run scripts/test")
)
final class SavedDuckTests {
    let session: LiveSession

    init() throws {
        session = try LiveSession()
    }

    deinit {
        session.stopAll()
    }

    @Test("music that starts while the music is ducked starts from the user's level and comes back to it")
    func newStreamDuringADuck() throws {
        let (music, own) = try session.startMusic()
        let daemon = try session.startDaemon()
        let prompt = try session.play(.long, role: "navigation", name: "navigation-app")
        try session.awaitInterrupted(music, own: own, by: .duck)
        // Another app's music (same role, so the same saved entry), started under the prompt.
        let video = try session.play(.otherMusic, role: "music", name: "video-app")
        let line = try daemon.awaitLog("as the server saved it from our change of another stream")
        #expect(line.contains("stream \(try #require(video.index))"), "\(line)")
        // Ducked from the user's level, not from the duck: −20 dB below it.
        try session.awaitStream(video, "ducked from the user's level") { DaemonTests.matches($0.volume, DaemonTests.volume(own, at: -20)) }
        prompt.stop()
        try session.awaitStream(video, "back at the user's level for music, not the duck", timeout: 5) {
            DaemonTests.matches($0.volume, own) && !$0.muted
        }
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    @Test("music that quits right after its restore ramp still gets its saved entry repaired (the last step may not have landed)")
    func quitRightAfterTheRestore() throws {
        let (music, own) = try session.startMusic()
        let daemon = try session.startDaemon()
        let prompt = try session.play(.long, role: "navigation", name: "navigation-app")
        try session.awaitInterrupted(music, own: own, by: .duck)
        prompt.stop()
        try session.awaitRestored(music, to: own)
        let mark = daemon.logCount
        music.kill()
        try daemon.awaitLog("repaired the saved volume of sink-input-by-media-role:music", after: mark)
        let again = try session.play(.music, role: "music", name: "music-app")
        #expect(DaemonTests.matches(try again.stream().volume, own), "the next music starts at the user's level")
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }
}
