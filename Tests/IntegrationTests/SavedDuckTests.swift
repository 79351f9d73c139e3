import AudioPolicy
import Foundation
import Testing
import TestRequirements

// The server saves our ducks: module-stream-restore (and WirePlumber on PipeWire) keeps every volume
// written to a stream as its role's or app's entry and gives it to the next stream of that key. A
// stream that starts while another of its key is ducked starts at that duck; the daemon must take the
// user's level under it for the stream's own, or it ducks it again from there and "restores" it to the
// duck (found by `audio-policyd soak` on PipeWire; reproduced on PulseAudio with paplay).

@Suite(
    "Saved ducks: a new stream the server starts at one of our ducks",
    .serialized,
    .needs(TestEnvironment.soundServerMissing)
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

    // A server can hand back one of our ducks long after the run that wrote it: WirePlumber saves its
    // file only after a second with no change anywhere, and a restart of the server reloads that
    // snapshot (the soak, on PipeWire: music started at a −20 dB duck written five minutes and six
    // daemons earlier). Here the server is given the duck as the role's saved level by hand, after a
    // clean stop, which leaves no journal to tell of it.

    @Test("a duck an earlier run settled at, handed back by the server after a clean stop: repaired on connecting, or taken for ours; the next music starts from the user's level")
    func settledDuckOfAnEarlierRun() throws {
        try settledDuckHandedBack(forgetting: false)
    }

    @Test("control: with the earlier runs' settled ducks forgotten, the same start is kept as the music's own level")
    func settledDuckForgotten() throws {
        try settledDuckHandedBack(forgetting: true)
    }

    private func settledDuckHandedBack(forgetting: Bool) throws {
        let stateHome = try TestEnvironment.temporaryFolder("audio-policyd-state")
        defer { try? FileManager.default.removeItem(at: stateHome) }
        let (music, own) = try session.startMusic()
        let first = try session.startDaemon(stateHome: stateHome)
        let prompt = try session.play(.long, role: "navigation", name: "navigation-app")
        try session.awaitInterrupted(music, own: own, by: .duck)
        prompt.stop()
        try session.awaitRestored(music, to: own)
        #expect(first.terminate() == 0)
        let file = stateHome.appendingPathComponent("audio-policyd/settled-ducks.json").path
        #expect(FileManager.default.fileExists(atPath: file), "written at the clean stop at the latest")
        music.stop()

        // The role's saved level becomes the duck: a stream of the role set to it, then ended.
        let ducked = DaemonTests.volume(own, at: -20)
        let setter = try session.play(.music, role: "music", name: "music-app")
        try SoundServer.setVolume(try #require(setter.index), raw: ducked.raw)
        try session.awaitStream(setter, "at the duck, as the role's saved level") { DaemonTests.matches($0.volume, ducked) }
        setter.stop()
        if forgetting { try FileManager.default.removeItem(atPath: file) }

        let second = try session.startDaemon(stateHome: stateHome)
        try second.awaitLog("connected to")
        let next = try session.play(.music, role: "music", name: "music-app")
        let index = try #require(next.index)
        try second.awaitLog("stream \(index) (music-app) class=primary")
        // On pipewire-pulse a stream can appear before its level is told: the daemon decides where its
        // start came from only once the level arrives.
        if second.log.contains(where: { $0.contains("stream \(index) (music-app) appeared with its level not told yet") }) {
            try second.awaitLog("stream \(index): the server told its level")
        }
        let startedAtOurs = { (line: String) in line.contains("stream \(index) (music-app) started at") && line.contains("as the server saved it") }
        // On connecting the daemon repairs a saved entry at a settled duck; a stream that starts before
        // that repair is answered gets the level under the duck as its own instead. Either way: the user's.
        let repairLine = { (line: String) in line.contains("a duck some run settled at") }
        if !forgetting {
            try second.awaitLog("the settled duck taken for ours or repaired") { startedAtOurs($0) || repairLine($0) }
        }
        let takenForOurs = second.log.contains(where: startedAtOurs)
        let repairedOnConnecting = second.log.contains(where: repairLine)
        if forgetting {
            #expect(!takenForOurs && !repairedOnConnecting)
            #expect(DaemonTests.matches(try next.stream().volume, ducked), "kept at the duck: taken for its own level")
        } else {
            #expect(takenForOurs || repairedOnConnecting, "\(second.logText)")
            try session.awaitStream(next, "back at the user's level") { DaemonTests.matches($0.volume, own) && !$0.muted }
        }
        #expect(second.problems.isEmpty, "\(second.problems)")
    }
}
