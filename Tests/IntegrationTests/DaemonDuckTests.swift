import AudioPolicy
import Foundation
import Testing

/// A short interruption as the default policy defines it.
struct DuckCase: Sendable, CustomTestStringConvertible {
    var role: String
    var className: String
    var decibels: Double
    var tone: Tone
    /// The class's hold and restore ramp, s.
    var hold: Double
    var restore: Double

    var testDescription: String { "\(role) → \(className), \(Int(decibels)) dB" }

    static let navigation = DuckCase(role: "navigation", className: "navigation", decibels: -20, tone: .prompt,
                                     hold: 0.5, restore: 1.0)
    static let notification = DuckCase(
        role: "event", className: "notification", decibels: -6,
        tone: Tone(name: "notification", frequency: 2000, seconds: 1.5), hold: 0.3, restore: 0.6)
}

extension DaemonTests {
    @Test("a prompt ducks the music to its class's level, then restores it exactly",
          arguments: [DuckCase.navigation, .notification])
    func promptDucksMusic(_ duck: DuckCase) throws {
        let (music, own) = try startMusic()
        let daemon = try startDaemon()
        let before = try record().level(Tone.musicBand)

        let prompt = try play(duck.tone, role: duck.role, name: "\(duck.className)-app")
        try awaitStream(music, "ducked by \(duck.decibels) dB") {
            $0.volume.isOffset(by: duck.decibels, from: own, tolerance: 0.5)
        }
        let during = try record()
        let ducked = try music.stream()
        #expect(ducked.volume.isOffset(by: duck.decibels, from: own, tolerance: 0.5),
                "server volume \(ducked.volume) is not \(duck.decibels) dB under \(own)")
        #expect(!ducked.muted)
        let musicDuring = try during.level(Tone.musicBand)
        #expect(abs(musicDuring - before - duck.decibels) <= 1,
                "the music played at \(musicDuring) dB during the prompt, \(before) dB before")
        #expect(try during.level(Tone.promptBand) > -30, "the prompt was not playing while the music was measured")
        let row = try daemon.stream(music.index)
        #expect(row?.state == .ducked, "\(String(describing: row))")
        #expect(try daemon.stream(prompt.index)?.class == duck.className)

        // The prompt ends by itself; the music comes back after the hold and the restore ramp.
        try events.awaitRemoval(of: try #require(prompt.index))
        let ended = Date()
        try awaitStream(music, "back at exactly \(own)", timeout: duck.hold + duck.restore + 3) {
            $0.volume == own && !$0.muted
        }
        let took = Date().timeIntervalSince(ended)
        // Not a jump: the hold and the ramp took their time (pactl hears of the end a little after
        // the daemon, hence the slack).
        #expect(took >= duck.hold + duck.restore - 0.2, "restored \(took) s after the prompt ended")
        let after = try record().level(Tone.musicBand)
        #expect(abs(after - before) <= 0.5, "the music played at \(after) dB after the prompt, \(before) dB before")
        #expect(try music.stream().volume == own)
        #expect(try daemon.stream(music.index)?.state == .playing)
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    @Test("a role-less chat beep (aplay through the pulse plugin) is ambient: the music is neither ducked, muted nor paused")
    func chatBeepDoesNotPauseMusic() throws {
        let (music, own) = try startMusic()
        let daemon = try startDaemon()
        try awaitNowPlaying(music, daemon)
        let before = try record().level(Tone.musicBand)

        let beep = try play(.beep, role: nil, name: "chat beep", program: .aplay)
        let beepStarted = Date()
        let beepStream = try beep.stream()
        #expect(beepStream.role == nil, "the beep has a role: \(beepStream.properties)")
        let beepIndex = try #require(beep.index)

        // Until the beep is gone, check on every change that the music is never muted, never paused, and
        // never ducked: a sound with no role and no player mixes with the music.
        var deepest = 0.0
        let check = {
            let now = try music.stream()
            try #require(!now.muted, "a chat beep muted the music: \(now)")
            deepest = min(deepest, zip(now.volume.decibels, own.decibels).map { $0 - $1 }.min() ?? 0)
            let state = try daemon.stream(music.index)?.state
            try #require(state != .paused, "a chat beep paused the music")
        }
        try changes.await("the beep to end and the music to be back at exactly \(own)", timeout: 8) { () throws -> Probe<Void> in
            try check()
            let now = try music.stream()
            let beepGone = try SoundServer.stream(beepIndex) == nil
            return beepGone && now.volume == own ? .done(()) : .waiting("\(now), beep \(beepGone ? "gone" : "playing")")
        }
        // Past the beep's grace time: an ended beep must not pause anything then either.
        try changes.watch(for: max(0, 2.0 - Date().timeIntervalSince(beepStarted)), check)
        #expect(deepest > -0.5, "ducked by \(deepest) dB")
        #expect(try music.stream().volume == own)
        #expect(!daemon.log.contains { $0.contains("muted") && $0.contains("music-app") }, "\(daemon.logText)")
        let status = try daemon.status()
        #expect(status.nowPlaying?.pid == Int(music.pid), "the beep took Now Playing: \(Self.describe(status))")
        let after = try record().level(Tone.musicBand)
        #expect(abs(after - before) <= 0.5, "the music played at \(after) dB after the beep, \(before) dB before")
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    @Test("the user's volume change during a duck wins: the daemon never overwrites it")
    func userVolumeDuringDuckWins() throws {
        let (music, own) = try startMusic()
        let daemon = try startDaemon()
        let before = try record().level(Tone.musicBand)

        let prompt = try play(.prompt, role: "navigation", name: "navigation-app")
        // The duck ramp has landed (so no step of it is still on its way).
        let landed = Self.volume(own, at: -20)
        try awaitStream(music, "ducked to \(landed)") { Self.matches($0.volume, landed) }

        let mark = daemon.logCount
        let user = try music.setVolume(percent: [70, 70])
        try daemon.awaitLog("the user changed its volume", after: mark)
        let untouched = {
            let now = try music.stream()
            try #require(now.volume == user && !now.muted, "the daemon overwrote the user's \(user): \(now)")
        }
        // During the rest of the prompt, and after it until its hold and restore ramp are long over.
        try changes.watch(for: 0.3, untouched)
        try events.awaitRemoval(of: try #require(prompt.index))
        try changes.watch(for: DuckCase.navigation.hold + DuckCase.navigation.restore + 0.5, untouched)

        let after = try record().level(Tone.musicBand)
        let expected = before + user.gain(from: own)
        #expect(abs(after - expected) <= 0.5, "the music played at \(after) dB; at the user's volume it is \(expected) dB")
        #expect(try daemon.stream(music.index)?.state == .playing)
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }
}
