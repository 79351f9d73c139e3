import AudioPolicy
import Foundation
import Testing

extension DaemonTests {
    @Test("a call pauses the music through the mute fallback (fade, then mute) and restores it exactly after")
    func callMutesMusicThenRestoresIt() throws {
        let (music, own) = try startMusic()
        let daemon = try startDaemon()
        let before = try record().level(Tone.musicBand)

        let call = try play(.long, role: "phone", name: "call-app")
        // The fallback fades: the server shows volumes between the user's and silence before the mute.
        var fading: [Volume] = []
        try awaitStream(music, "muted by the call", timeout: 5) { now in
            if !now.muted, now.volume != own, now.volume.raw.contains(where: { $0 > 0 }) { fading.append(now.volume) }
            return now.muted
        }
        #expect(!fading.isEmpty, "muted without a fade")
        let row = try daemon.stream(music.index)
        #expect(row?.state == .paused && row?.muted == true, "\(String(describing: row))")
        #expect(try daemon.stream(call.index)?.class == "call")
        // What the sink plays follows the mute the server reports by its latency, which a loaded PipeWire
        // stretches past the recording's lead: the music must fall silent within 2 s of it.
        var heard: [Double] = []
        let during = try changes.await("the music to fall silent under the call", timeout: 2) { () throws -> Probe<Recording> in
            let window = try record(seconds: 0.3)
            let music = try window.level(Tone.musicBand)
            heard.append(music)
            return music < -90 ? .done(window) : .waiting("the music at \(heard.map { Int($0) }) dB")
        }
        #expect(try during.level(Tone.promptBand) > -30, "the call is not audible")

        call.stop()
        try events.awaitRemoval(of: try #require(call.index))
        try awaitStream(music, "unmuted, back at exactly \(own)", timeout: 4) { !$0.muted && $0.volume == own }
        let after = try record().level(Tone.musicBand)
        #expect(abs(after - before) <= 0.5, "the music played at \(after) dB after the call, \(before) dB before")
        #expect(try daemon.stream(music.index)?.state == .playing)
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    @Test("music its user muted before the daemon started stays muted, at its volume, through a call and after it (control: the test above, where unmuted music is muted and unmuted)")
    func userMutedMusicStaysMutedThroughACall() throws {
        let (music, own) = try startMusic()
        try music.setMuted(true)
        let daemon = try startDaemon()
        let call = try play(.long, role: "phone", name: "call-app")
        try changes.await("the daemon to know the call", timeout: 5) { () throws -> Probe<Void> in
            try daemon.stream(call.index)?.class == "call" ? .done(()) : .waiting("not yet")
        }
        // The fallback would fade it out first: nothing may touch it.
        try changes.watch(for: 1) {
            let now = try music.stream()
            try #require(now.muted && now.volume == own, "the user's muted music was changed during the call: \(now)")
        }
        call.stop()
        try events.awaitRemoval(of: try #require(call.index))
        try changes.watch(for: 1.5) {
            let now = try music.stream()
            try #require(now.muted && now.volume == own, "the user's muted music was changed after the call: \(now)")
        }
        #expect(try record().level(Tone.musicBand) < -90, "the user's muted music is audible")
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    @Test("music the server starts with the mute its user gave the music role stays muted, at its level, through a call and after it (control: the first test, where unmuted music is muted and unmuted)")
    func restoredUserMuteStaysThroughACall() throws {
        let daemon = try startDaemon()
        // The user mutes the music; the server saves that mute for the role and gives it to the next one.
        let (first, _) = try startMusic(name: "music-one")
        try first.setMuted(true)
        try awaitStream(first, "muted by its user") { $0.muted }
        first.stop()
        try events.awaitRemoval(of: try #require(first.index))
        let second = try play(.music, role: "music", name: "music-two")
        defer { try? second.unmute() }
        let start = try awaitStream(second, "started with the saved mute") { $0.muted }
        let call = try play(.long, role: "phone", name: "call-app")
        try changes.await("the daemon to know the call", timeout: 5) { () throws -> Probe<Void> in
            try daemon.stream(call.index)?.class == "call" ? .done(()) : .waiting("not yet")
        }
        try changes.watch(for: 1) {
            let now = try second.stream()
            try #require(now.muted && now.volume == start.volume, "the restored mute was changed during the call: \(now)")
        }
        call.stop()
        try events.awaitRemoval(of: try #require(call.index))
        try changes.watch(for: 1.5) {
            let now = try second.stream()
            try #require(now.muted && now.volume == start.volume, "the restored mute was changed after the call: \(now)")
        }
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    @Test("a second music app pauses the first for good after the grace time, and takes Now Playing")
    func secondMusicAppTakesOver() throws {
        let (first, own) = try startMusic(name: "music-one")
        let daemon = try startDaemon()
        try awaitNowPlaying(first, daemon)

        let second = try play(.otherMusic, role: "music", name: "music-two")
        let secondStarted = Date()
        // During the grace time it only ducks the first (a primary's duck, -14 dB)...
        try awaitStream(first, "ducked during the grace time") { $0.volume.isOffset(by: -14, from: own, tolerance: 0.5) }
        #expect(try !first.stream().muted)
        // ...then the first, which has no player to pause, is faded out and muted.
        try awaitStream(first, "muted once the grace time is over", timeout: 5) { $0.muted }
        let took = Date().timeIntervalSince(secondStarted)
        #expect(took >= 1.5, "muted \(took) s after the second app started, before the 1.5 s grace time")
        let status = try daemon.status()
        let row = status.streams.first { $0.index == first.index }
        #expect(row?.state == .paused && row?.muted == true, "\(Self.describe(status))")
        #expect(status.nowPlaying?.pid == Int(second.pid), "Now Playing: \(Self.describe(status))")
        let during = try record()
        #expect(try during.level(Tone.musicBand) < -90, "the first app is audible")
        #expect(try during.level(1100...1300) > -30, "the second app is not audible")

        // Paused for as long as the second plays: still muted a while later.
        try changes.watch(for: 0.5) {
            try #require(try first.stream().muted, "the first app came back while the second plays")
        }
        // The mute fallback ends with the app that caused it (nothing is left muted for good).
        second.stop()
        try events.awaitRemoval(of: try #require(second.index))
        try awaitStream(first, "unmuted, back at exactly \(own)", timeout: 4) { !$0.muted && $0.volume == own }
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }
}
