import AudioPolicy
import Foundation
import Testing
import TestRequirements

// After a crash, the restarted daemon unmutes the music the call had muted (recovery) and mutes it
// again at once (the call is still on); the server's last report then equals its report before, so no
// echo tells the daemon's copy of the stream what the server holds. A user's volume change then must
// stay a volume change: read against that copy it looked like the user muting the stream, and the mute
// was never undone when the call ended (found by `audio-policyd soak` on PulseAudio).

@Suite(
    "Recovery, then the user's change: a volume change is not a mute",
    .serialized,
    .needs(TestEnvironment.soundServerMissing)
)
final class RecoveredUserChangeTests {
    let session: LiveSession
    let stateHome: URL
    let runtime: URL

    init() throws {
        session = try LiveSession()
        stateHome = try TestEnvironment.temporaryFolder("audio-policyd-state")
        runtime = try TestEnvironment.temporaryFolder("audio-policyd-runtime")
    }

    deinit {
        session.stopAll()
        try? FileManager.default.removeItem(at: stateHome)
        try? FileManager.default.removeItem(at: runtime)
    }

    @Test("killed -9 during a call, restarted while it lasts; the user sets the music's volume; the call ends: unmuted at that volume")
    func userVolumeAfterRecovery() throws {
        let (music, own) = try session.startMusic()
        let first = try session.startDaemon(stateHome: stateHome, runtime: runtime)
        let call = try session.play(Interruption.mute.tone, role: "phone", name: "phone-app")
        try session.awaitInterrupted(music, own: own, by: .mute)
        first.kill()

        let second = try session.startDaemon(stateHome: stateHome, runtime: runtime)
        try second.awaitLog("journal: recovery done")
        try session.awaitInterrupted(music, own: own, by: .mute)
        let chosen = try music.setVolume(percent: [60, 75])
        try second.awaitLog("the user changed its volume")
        call.stop()
        try session.awaitStream(music, "unmuted at the user's new volume after the call", timeout: 5) {
            DaemonTests.matches($0.volume, chosen) && !$0.muted
        }
        #expect(second.problems.isEmpty, "\(second.problems)")
    }
}
