import AudioPolicy
import Foundation
import Testing

// The policy's `[audibility]` on the real server: a navigation prompt that murmurs at −54 dBFS, between
// the default thresholds (−50 dB heard, −60 dB silent), is neither woken nor silenced by them, so the music
// stays ducked under it (the control); a reload that raises the thresholds reaches the meter already
// running, the murmur is judged silent, and the music comes back while the prompt still plays. Asserted:
// what the server reports (the music's volume), what the daemon says of the prompt (measured, audible)
// and what the sink played (the music's band on its monitor).

extension DaemonTests {
    /// A prompt whose peaks stay at −54 dBFS for as long as any test runs.
    static let murmur = Tone(name: "murmur", frequency: 2000, seconds: 30, amplitude: 0.002)

    @Test("[audibility]: a prompt murmuring at -54 dBFS keeps the music ducked under the default thresholds (control); reloaded with heard-above -40 dB and silent-below -45 dB, the running meter judges it silent and the music is back at exactly its level while the prompt plays on")
    func audibilityThresholdsComeFromThePolicy() throws {
        let folder = try TestEnvironment.temporaryFolder("audio-policyd-audibility")
        defer { try? FileManager.default.removeItem(at: folder) }
        let dropIn = folder.appendingPathComponent("audibility.toml")
        try "[drop-in]\n".write(to: dropIn, atomically: true, encoding: .utf8)
        let (music, own) = try startMusic()
        let daemon = try startDaemon(policy: dropIn.path)
        let before = try record().level(Tone.musicBand)
        let prompt = try play(Self.murmur, role: "navigation", name: "murmur-app")
        // At 100 %, whatever level the server saved for navigation prompts: its peaks are the tone's own.
        try SoundServer.setVolume(try #require(prompt.index), raw: [65536, 65536])
        let ducked = Self.volume(own, at: -20)
        try awaitStream(music, "ducked by the murmuring prompt") { Self.matches($0.volume, ducked) }
        try changes.await("the prompt to be measured", timeout: 5) { () throws -> Probe<Void> in
            try daemon.stream(prompt.index)?.measured == true ? .done(()) : .waiting("not measured")
        }

        // Control: longer than a silence would take to give the music back (the first verdict's 1.5 s,
        // the 400 ms hangover, the class's 1 s release, 0.5 s hold and 1 s restore), it stays ducked.
        try changes.watch(for: 6) {
            let now = try music.stream()
            try #require(Self.matches(now.volume, ducked), "the music left its duck under the default thresholds: \(now)")
        }
        let row = try daemon.stream(prompt.index)
        #expect(row?.audible == true && row?.measured == true, "\(String(describing: row))")
        let under = try record().level(Tone.musicBand)
        #expect(abs(under - before + 20) <= 1, "music at \(before) dB before the prompt, \(under) dB under it")

        // The thresholds raised by a reload: the murmur is below both.
        try """
            [drop-in]
            [audibility]
            heard-above = "-40 dB"
            silent-below = "-45 dB"

            """.write(to: dropIn, atomically: true, encoding: .utf8)
        let mark = daemon.logCount
        daemon.signal(SIGHUP)
        try daemon.awaitLog("reloaded", after: mark)
        try changes.await("the prompt judged silent", timeout: 5) { () throws -> Probe<Void> in
            try daemon.stream(prompt.index)?.audible == false ? .done(()) : .waiting("audible")
        }
        try awaitStream(music, "back at exactly \(own)", timeout: 5) { $0.volume == own && !$0.muted }
        let after = try record().level(Tone.musicBand)
        #expect(abs(after - before) <= 0.5, "music at \(before) dB before the prompt, \(after) dB once it was silent")
        #expect(try SoundServer.stream(try #require(prompt.index)) != nil, "the prompt ended: nothing was judged")
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }
}
