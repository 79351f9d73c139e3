import AudioPolicy
import Foundation
import Testing

// Real apps nobody here wrote, against mpv's music with MPRIS: Chromium and Firefox under Xvfb on local
// pages (Tests/RealApps), speech-dispatcher through spd-say, libcanberra through canberra-gtk-play.
// Asserted: what the server reports (the music's volume), what playerctl says (Playing or Paused), what
// the daemon says (Now Playing, audible or silent), and what the sink played (the music's band on its
// monitor). Each check has a control that must come out the other way: a ping and a silent page leave
// the music playing at its level, a soundtrack pauses it for good; a browser call pauses it and resumes it
// after; the screen reader ducks it and is never ducked, a notification ducks it lightly.

extension MPRISTests {
    /// Music from mpv (MPRIS), owning Now Playing, at a known own volume; the daemon running. Returns the
    /// music's own volume and its level in the sink's monitor.
    func musicUnderDaemon() throws -> (DaemonProcess, MPV, Volume, Double) {
        let daemon = try startDaemon()
        let mpv = try startMPV()
        try awaitNowPlaying(mpv, daemon, timeout: 10)
        // mpv's own stream passes its grace (its meter closes): the daemon leaves it alone from now on.
        try awaitStatus(daemon, "mpv's stream to be measured no more", timeout: 10) { status in
            status.streams.contains { $0.index == mpv.index && $0.measured == false }
        }
        let own = try mpv.stream().volume
        let level = try record().level(Tone.musicBand)
        return (daemon, mpv, own, level)
    }

    /// Waits until the daemon has measured the stream `index` and found it silent.
    func awaitSilent(_ daemon: DaemonProcess, _ index: UInt32, timeout: Double = 15) throws {
        try awaitStatus(daemon, "stream \(index) to be measured silent", timeout: timeout) { status in
            status.streams.contains { $0.index == index && $0.audible == false }
        }
    }

    /// Waits until mpv's stream is back at exactly its own volume, unmuted.
    func awaitMusicRestored(_ mpv: MPV, to own: Volume, timeout: Double = 10) throws {
        try awaitStream(mpv, "back at \(own), unmuted", timeout: timeout) {
            DaemonTests.matches($0.volume, own) && !$0.muted
        }
    }

    static func isChromium(_ properties: [String: String]) -> Bool {
        properties["application.name"] == "Chromium" || properties["application.process.binary"] == "chromium"
    }

    static func isFirefox(_ properties: [String: String]) -> Bool {
        properties["application.name"] == "Firefox" || properties["application.process.binary"]?.hasPrefix("firefox") == true
    }

    // MARK: - Browsers

    @Test("Chromium: a chat ping ducks the music while it sounds and never pauses it; the music keeps Now Playing",
          .disabled(if: RealApp.missing != nil, "\(RealApp.missing ?? "")"))
    func chromiumPingNeverPausesMusic() throws {
        let (daemon, mpv, own, before) = try musicUnderDaemon()
        let browser = try RealApp.browser("chromium", page: "ping")
        let ping = try browser.awaitStream(changes: changes, Self.isChromium)
        // Chromium keeps the stream open and silent for seconds after the 0.3 s beep.
        try awaitSilent(daemon, ping.index)
        try awaitMusicRestored(mpv, to: own)
        #expect(try mpv.status() == "Playing")
        let status = try daemon.status()
        #expect(status.nowPlaying?.player == mpv.busName, "Now Playing went to \(status.nowPlaying?.application ?? "nobody")")
        let after = try record().level(Tone.musicBand)
        #expect(abs(after - before) < 0.5, "music at \(before) dB before the ping, \(after) dB after")
        browser.stop()
    }

    @Test("Chromium: a page that plays a soundtrack pauses the music for good (the ping's control)",
          .disabled(if: RealApp.missing != nil, "\(RealApp.missing ?? "")"))
    func chromiumSoundtrackPausesMusicForGood() throws {
        let (daemon, mpv, _, _) = try musicUnderDaemon()
        let browser = try RealApp.browser("chromium", page: "soundtrack")
        let track = try browser.awaitStream(changes: changes, Self.isChromium)
        try awaitPlayer(mpv, "Paused", timeout: 15, daemon)
        try awaitStatus(daemon, "Chromium to own Now Playing", timeout: 5) { $0.nowPlaying?.index == track.index }
        browser.stop()
        try events.awaitRemoval(of: track.index, timeout: 15)
        try expectStays(mpv, "Paused", for: 3, "another app's music paused it for good")
    }

    @Test("Firefox: a page holding a silent, running AudioContext never pauses the music nor takes Now Playing",
          .disabled(if: RealApp.missing != nil, "\(RealApp.missing ?? "")"))
    func firefoxSilentPageNeverPausesMusic() throws {
        let (daemon, mpv, own, before) = try musicUnderDaemon()
        let browser = try RealApp.browser("firefox", page: "silent")
        let page = try browser.awaitStream(changes: changes, Self.isFirefox)
        try awaitSilent(daemon, page.index)
        try awaitMusicRestored(mpv, to: own)
        // The page stays open, silent: past twice the grace, the music still plays and owns Now Playing.
        try expectStays(mpv, "Playing", for: 3, "a silent page must not pause the music")
        #expect(try daemon.status().nowPlaying?.player == mpv.busName)
        let after = try record().level(Tone.musicBand)
        #expect(abs(after - before) < 0.5, "music at \(before) dB before the page, \(after) dB after")
        browser.stop()
    }

    @Test("Firefox: a page that plays a soundtrack pauses the music (the silent page's control)",
          .disabled(if: RealApp.missing != nil, "\(RealApp.missing ?? "")"))
    func firefoxSoundtrackPausesMusic() throws {
        let (daemon, mpv, _, _) = try musicUnderDaemon()
        let browser = try RealApp.browser("firefox", page: "soundtrack")
        _ = try browser.awaitStream(changes: changes, Self.isFirefox)
        try awaitPlayer(mpv, "Paused", timeout: 15, daemon)
        browser.stop()
    }

    @Test("Chromium: a call (the page records from a microphone) pauses the music and resumes it after",
          .disabled(if: RealApp.missing != nil, "\(RealApp.missing ?? "")"))
    func browserCallPausesAndResumesMusic() throws {
        let (daemon, mpv, own, _) = try musicUnderDaemon()
        let browser = try RealApp.browser("chromium", page: "call")
        let call = try browser.awaitStream(changes: changes, Self.isChromium)
        try awaitStatus(daemon, "Chromium's playback to be a call", timeout: 20) { status in
            status.streams.contains { $0.index == call.index && $0.class == "call" }
        }
        try awaitPlayer(mpv, "Paused", timeout: 10, daemon)
        #expect(try daemon.status().nowPlaying?.player == mpv.busName, "a call never takes Now Playing")
        browser.stop()
        try mpv.awaitStatus("Playing", timeout: 10)
        try awaitMusicRestored(mpv, to: own)
    }

    // MARK: - Speech and event sounds

    @Test("speech-dispatcher: the screen reader ducks the music while it speaks, is never ducked, and the music comes back",
          .disabled(if: RealApp.missing != nil, "\(RealApp.missing ?? "")"))
    func screenReaderDucksMusicAndIsNeverDucked() throws {
        let (daemon, mpv, own, _) = try musicUnderDaemon()
        let speech = try RealApp.speak(["This is the screen reader speaking over your music, for a few seconds.",
                                        "And a second phrase after a pause."], gap: 3)
        let voice = try speech.awaitStream(changes: changes, timeout: 30) {
            $0["application.name"]?.hasPrefix("speech-dispatcher") == true
        }
        let voiceOwn = voice.volume
        try awaitStatus(daemon, "the voice to be a screen reader", timeout: 5) { status in
            status.streams.contains { $0.index == voice.index && $0.class == "speech" }
        }
        let ducked = DaemonTests.volume(own, at: -14)
        try awaitStream(mpv, "ducked to -14 dB under the voice", timeout: 10) { DaemonTests.matches($0.volume, ducked) }
        #expect(try mpv.status() == "Playing", "speech ducks the music; it does not pause it")
        // Between and after the phrases the music comes back; the voice is never touched.
        try awaitMusicRestored(mpv, to: own, timeout: 20)
        if let now = try SoundServer.stream(voice.index) {
            #expect(DaemonTests.matches(now.volume, voiceOwn) && !now.muted, "the screen reader was changed: \(now)")
        }
        #expect(try daemon.status().nowPlaying?.player == mpv.busName, "speech never takes Now Playing")
        _ = try speech.awaitExit(timeout: 30)
    }

    @Test("libcanberra: an event sound is a notification: a light duck, restored exactly, never a pause",
          .disabled(if: RealApp.missing != nil, "\(RealApp.missing ?? "")"))
    func canberraEventDucksLightly() throws {
        let (daemon, mpv, own, _) = try musicUnderDaemon()
        let sound = try RealApp.canberra(["-i", "message-new-instant"])
        let bell = try sound.awaitStream(changes: changes, timeout: 30) { $0["event.id"] != nil }
        try awaitStatus(daemon, "the event sound to be a notification", timeout: 5) { status in
            status.streams.contains { $0.index == bell.index && $0.class == "notification" }
        }
        let ducked = DaemonTests.volume(own, at: -6)
        try awaitStream(mpv, "ducked to -6 dB", timeout: 5) { DaemonTests.matches($0.volume, ducked) }
        try events.awaitRemoval(of: bell.index, timeout: 20)
        try awaitMusicRestored(mpv, to: own)
        #expect(try mpv.status() == "Playing")
    }

    // MARK: - Waiting on the player

    /// Waits for mpv to show `status`; if it does not, the failure carries the daemon's last log lines,
    /// so a run on a busy machine says what the daemon decided and sent meanwhile.
    private func awaitPlayer(_ mpv: MPV, _ status: String, timeout: Double, _ daemon: DaemonProcess) throws {
        do {
            try mpv.awaitStatus(status, timeout: timeout)
        } catch {
            throw CommandFailure(description: "\(error)\ndaemon log:\n" + daemon.log.suffix(40).joined(separator: "\n"))
        }
    }
}
