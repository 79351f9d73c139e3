import AudioPolicy
import ControlProtocol
import Foundation
import Testing
import TestRequirements

// Real apps nobody here wrote, against mpv's music with MPRIS: Chromium and Firefox under Xvfb on local
// pages (Tests/RealApps), speech-dispatcher through spd-say, libcanberra through canberra-gtk-play.
// Asserted: what the server reports (the music's volume), what playerctl says (Playing or Paused), what
// the daemon says (Now Playing, a stream's class, audible or silent), and what the sink played (the
// music's band on its monitor). Each check has a control that must come out the other way: a ping and a
// silent page leave the music playing at its level, an `<audio>` element (media: the browser gives it a
// media session and an MPRIS player) pauses it for good; a web game's WebAudio soundtrack (no media
// session) plays along with it, the `<audio>` element pauses it; a browser call pauses it and resumes it
// after; the screen reader ducks it and is never ducked, a notification ducks it lightly.

extension MPRISTests {
    /// Music from mpv (MPRIS), owning Now Playing, at a known own volume; the daemon running. Returns the
    /// music's own volume and its level in the sink's monitor.
    func musicUnderDaemon(policy: String? = nil) throws -> (DaemonProcess, MPV, Volume, Double) {
        let daemon = try startDaemon(policy: policy)
        let (mpv, own, level) = try music(under: daemon)
        return (daemon, mpv, own, level)
    }

    /// Music from mpv (MPRIS) under `daemon`, owning Now Playing and past its grace; its own volume and its
    /// level in the sink's monitor.
    func music(under daemon: DaemonProcess) throws -> (MPV, Volume, Double) {
        let mpv = try startMPV()
        try awaitNowPlaying(mpv, daemon, timeout: 10)
        // mpv's own stream passes its grace (its meter closes): the daemon leaves it alone from now on.
        try awaitStatus(daemon, "mpv's stream to be measured no more", timeout: 10) { status in
            status.streams.contains { $0.index == mpv.index && $0.measured == false }
        }
        return (mpv, try mpv.stream().volume, try record().level(Tone.musicBand))
    }

    /// Waits until mpv's stream is back at exactly its own volume, unmuted.
    func awaitMusicRestored(_ mpv: MPV, to own: Volume, timeout: Double = 10) throws {
        try awaitStream(mpv, "back at \(own), unmuted", timeout: timeout) {
            DaemonTests.matches($0.volume, own) && !$0.muted
        }
    }

    /// The band the ping page's 880 Hz beep is heard in.
    static let pingBand = 780...980

    static func isChromium(_ properties: [String: String]) -> Bool {
        properties["application.name"] == "Chromium" || properties["application.process.binary"] == "chromium"
    }

    static func isFirefox(_ properties: [String: String]) -> Bool {
        properties["application.name"] == "Firefox" || properties["application.process.binary"]?.hasPrefix("firefox") == true
    }

    /// Waits until the daemon has put stream `index` in `className`.
    @discardableResult
    func awaitClass(_ daemon: DaemonProcess, _ index: UInt32, _ className: String,
                    timeout: Double = 5) throws -> StatusReport {
        try awaitStatus(daemon, "stream \(index) to be \(className)", timeout: timeout) { status in
            status.streams.contains { $0.index == index && $0.class == className }
        }
    }

    /// Waits until the sink plays `band` audibly (above −30 dB): the app's sound really comes out.
    func awaitHeard(_ band: ClosedRange<Int>, _ what: String, timeout: Double = 15) throws {
        try changes.await("\(what) to be heard in \(band) Hz", timeout: timeout) { () throws -> Probe<Void> in
            let level = try record(seconds: 0.3).level(band)
            return level > -30 ? .done(()) : .waiting("\(level) dB")
        }
    }

    /// The MPRIS players on the bus (`playerctl -l`), by the names playerctl knows them.
    static func players() throws -> [String] {
        // playerctl -l exits 1 with "No players found" when there are none.
        let listed = (try? run("playerctl", "-l", timeout: 5)) ?? ""
        return listed.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Waits for a player whose name starts with `prefix` (`chromium.instance1234`, `firefox.instance_1_8`)
    /// to show up Playing; its name.
    func awaitPlayerNamed(_ prefix: String, timeout: Double = 20) throws -> String {
        try changes.await("an MPRIS player named \(prefix)… to be Playing", timeout: timeout) { () throws -> Probe<String> in
            let players = try Self.players()
            for name in players where name.hasPrefix(prefix) {
                if (try? SessionBus.playerctl(name, "status")) == "Playing" { return .done(name) }
            }
            return .waiting("players: \(players)")
        }
    }

    // MARK: - Browsers

    @Test("Chromium: a chat ping (no role, no player) is ambient: the music is never ducked nor paused and keeps Now Playing",
          .needs(RealApp.missing))
    func chromiumPingNeverPausesMusic() throws {
        let (daemon, mpv, own, before) = try musicUnderDaemon()
        let browser = try RealApp.browser("chromium", page: "ping")
        let ping = try browser.awaitStream(changes: changes, Self.isChromium)
        try awaitClass(daemon, ping.index, "ambient")
        // The 0.3 s beep comes ~0.1 s after the stream appears: from 1 s before the stream was seen to
        // 2 s after, the beep is heard and the music plays at its level all along.
        let around = try record(seconds: 2, past: 1)
        #expect(try around.level(Self.pingBand) > -30, "the ping was not heard")
        let music = try around.level(Tone.musicBand)
        #expect(abs(music - before) < 0.5, "music at \(before) dB before the ping, \(music) dB around it")
        // Chromium keeps the stream open and silent for seconds after the beep: past twice the grace, the
        // music still plays, untouched, and owns Now Playing.
        try expectStays(mpv, "Playing", for: 2, "a chat ping must not pause the music")
        let now = try mpv.stream()
        #expect(DaemonTests.matches(now.volume, own) && !now.muted, "the music was changed: \(now)")
        let status = try daemon.status()
        #expect(status.nowPlaying?.player == mpv.busName, "Now Playing went to \(status.nowPlaying?.application ?? "nobody")")
        #expect(!daemon.log.contains { $0.contains("Pause \(mpv.busName)") }, "\(daemon.logText)")
        browser.stop()
    }

    @Test("Chromium: a page's <audio> element (media: a media session, an MPRIS player) pauses the music for good and takes Now Playing (the ping's and the web game's control)",
          .needs(RealApp.missing))
    func chromiumAudioElementPausesMusicForGood() throws {
        try audioElementPausesMusicForGood("chromium", Self.isChromium)
    }

    @Test("Chromium: a web game's WebAudio soundtrack (no media session) is ambient: the music keeps playing at its level and keeps Now Playing",
          .needs(RealApp.missing))
    func chromiumWebGameMixesWithMusic() throws {
        try webGameMixesWithMusic("chromium", Self.isChromium)
    }

    @Test("Chromium: its page's song ended, its player stays on the bus, Stopped: a web game the same browser opens later in a new window is ambient, and the music plays on at its level and keeps Now Playing (control: a second song in a new window of that browser pauses the music)",
          .needs(RealApp.missing))
    func chromiumStalePlayerMakesNothingMedia() throws {
        let daemon = try startDaemon()
        let browser = try RealApp.chromiumTakingWindows(page: "soundtrack?element&seconds=7&once")
        let song = try browser.awaitStream(changes: changes, Self.isChromium)
        let player = try awaitPlayerNamed("chromium")
        try awaitClass(daemon, song.index, "primary", timeout: 10)
        // The 7 s song ends: the player stays on the bus and says Stopped.
        try changes.await("the song's player to stop playing", timeout: 20) { () throws -> Probe<Void> in
            let status = (try? SessionBus.playerctl(player, "status")) ?? "gone"
            return status == "Stopped" || status == "Paused" ? .done(()) : .waiting(status)
        }
        // The user's music, in mpv: it takes Now Playing and outlives its grace.
        let (mpv, own, before) = try music(under: daemon)
        #expect(try Self.players().contains(player), "the song's player left the bus: the test shows nothing")

        // A web game in a new window of the same browser: its sound is the browser's, whose player is Stopped.
        var known = Set(try SoundServer.streams().map(\.index))
        try browser.open("soundtrack?hz=\(Tone.game.frequency)")
        let game = try browser.awaitStream(changes: changes, excluding: known, Self.isChromium)
        try expectMixes(game, with: mpv, own: own, before: before, daemon,
                        "a web game must not pause the music, whatever player its browser kept")

        // Control: a second song in a new window of that browser says Playing with its player: media.
        known = Set(try SoundServer.streams().map(\.index))
        try browser.open("soundtrack?element&seconds=7&once")
        let second = try browser.awaitStream(changes: changes, excluding: known, Self.isChromium)
        try awaitClass(daemon, second.index, "primary", timeout: 10)
        try awaitPlayer(mpv, "Paused", timeout: 15, daemon)
        browser.stop()
    }

    @Test("Firefox: a page holding a silent, running AudioContext is ambient: never pauses the music nor takes Now Playing",
          .needs(RealApp.missing))
    func firefoxSilentPageNeverPausesMusic() throws {
        let (daemon, mpv, own, before) = try musicUnderDaemon()
        let browser = try RealApp.browser("firefox", page: "silent")
        let page = try browser.awaitStream(changes: changes, Self.isFirefox)
        try awaitClass(daemon, page.index, "ambient")
        // The page stays open, silent: past twice the grace, the music still plays, untouched, and owns
        // Now Playing.
        try expectStays(mpv, "Playing", for: 3, "a silent page must not pause the music")
        let now = try mpv.stream()
        #expect(DaemonTests.matches(now.volume, own) && !now.muted, "the music was changed: \(now)")
        #expect(try daemon.status().nowPlaying?.player == mpv.busName)
        let after = try record().level(Tone.musicBand)
        #expect(abs(after - before) < 0.5, "music at \(before) dB before the page, \(after) dB after")
        browser.stop()
    }

    @Test("Firefox: a page's <audio> element (media: a media session, an MPRIS player) pauses the music for good and takes Now Playing (the silent page's and the web game's control)",
          .needs(RealApp.missing))
    func firefoxAudioElementPausesMusicForGood() throws {
        try audioElementPausesMusicForGood("firefox", Self.isFirefox)
    }

    @Test("Firefox: a web game's WebAudio soundtrack (no media session) is ambient: the music keeps playing at its level and keeps Now Playing",
          .needs(RealApp.missing))
    func firefoxWebGameMixesWithMusic() throws {
        try webGameMixesWithMusic("firefox", Self.isFirefox)
    }

    /// A long looped `<audio>` element (20 s of 440 Hz): the browser registers an MPRIS player for the
    /// page's media session, which makes its stream media (`primary`): after the grace mpv is paused for
    /// good and the page owns Now Playing.
    private func audioElementPausesMusicForGood(_ browserName: String,
                                                _ matches: @escaping ([String: String]) -> Bool) throws {
        let (daemon, mpv, _, _) = try musicUnderDaemon()
        let browser = try RealApp.browser(browserName, page: "soundtrack?element")
        let track = try browser.awaitStream(changes: changes, matches)
        let player = try awaitPlayerNamed(browserName)
        try awaitClass(daemon, track.index, "primary", timeout: 10)
        try awaitPlayer(mpv, "Paused", timeout: 15, daemon)
        let status = try awaitStatus(daemon, "\(browserName) to own Now Playing", timeout: 5) {
            $0.nowPlaying?.index == track.index
        }
        #expect(status.nowPlaying?.player == "org.mpris.MediaPlayer2.\(player)",
                "Now Playing names player \(status.nowPlaying?.player ?? "none"), the page's is \(player)")
        browser.stop()
        try events.awaitRemoval(of: track.index, timeout: 15)
        try expectStays(mpv, "Paused", for: 3, "another app's media paused it for good")
    }

    /// A web game's soundtrack (`Tone.game`) from `game` is ambient, heard, and plays along with the music:
    /// for twice a primary's grace the music plays on at its own volume and level, and owns Now Playing.
    func expectMixes(_ game: ServerStream, with mpv: MPV, own: Volume, before: Double, _ daemon: DaemonProcess,
                     _ why: String) throws {
        try awaitClass(daemon, game.index, "ambient")
        try awaitHeard(Tone.gameBand, "the page's soundtrack")
        try expectStays(mpv, "Playing", for: 3, why)
        let during = try record()
        let music = try during.level(Tone.musicBand)
        #expect(abs(music - before) < 0.5, "music at \(before) dB before the page, \(music) dB under its soundtrack")
        #expect(try during.level(Tone.gameBand) > -30, "the page's soundtrack stopped")
        let now = try mpv.stream()
        #expect(DaemonTests.matches(now.volume, own) && !now.muted, "the music was changed: \(now)")
        let status = try daemon.status()
        #expect(status.nowPlaying?.player == mpv.busName, "Now Playing went to \(status.nowPlaying?.application ?? "nobody")")
        #expect(status.streams.first { $0.index == game.index }?.class == "ambient", "\(DaemonTests.describe(status))")
    }

    /// The WebAudio soundtrack at 1000 Hz (outside the music's band, so the music is measured under it):
    /// no media session, no MPRIS player, so the page is `ambient` and plays along with the music.
    private func webGameMixesWithMusic(_ browserName: String,
                                       _ matches: @escaping ([String: String]) -> Bool) throws {
        let (daemon, mpv, own, before) = try musicUnderDaemon()
        let browser = try RealApp.browser(browserName, page: "soundtrack?hz=\(Tone.game.frequency)")
        let track = try browser.awaitStream(changes: changes, matches)
        try expectMixes(track, with: mpv, own: own, before: before, daemon, "a web game must not pause the music")
        let players = try Self.players()
        #expect(!players.contains { $0.hasPrefix(browserName) }, "the page has a media player after all: \(players)")
        browser.stop()
    }

    @Test("Chromium: a call (the page records from a microphone) pauses the music and resumes it after",
          .needs(RealApp.missing))
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
        // The call is over once its stream is gone (a browser under load takes seconds to let it go); from
        // then on the daemon has 10 s to resume the music, and its log says why if it does not.
        try events.awaitRemoval(of: call.index, timeout: 20)
        try awaitPlayer(mpv, "Playing", timeout: 10, daemon)
        try awaitMusicRestored(mpv, to: own)
    }

    /// The band the call page's far end (660 Hz) is heard in.
    static let callBand = 620...700

    @Test("Chromium: with the calls-duck drop-in, a web call whose far end speaks in bursts (2 s, then 2 s of silence) ducks the music while it is heard and gives it back within 1.5 s of each pause, never pausing it (control: the default policy pauses it for the call)",
          .needs(RealApp.missing), arguments: [true, false])
    func browserCallDucksWithTheDropIn(dropIn: Bool) throws {
        let policy = dropIn ? TestEnvironment.packageRoot.appendingPathComponent("policies/calls-duck.toml").path : nil
        let (daemon, mpv, own, before) = try musicUnderDaemon(policy: policy)
        let browser = try RealApp.browser("chromium", page: "call?bursts")
        let call = try browser.awaitStream(changes: changes, Self.isChromium)
        try awaitStatus(daemon, "Chromium's playback to be a call", timeout: 20) { status in
            status.streams.contains { $0.index == call.index && $0.class == "call" }
        }
        guard dropIn else {
            try awaitPlayer(mpv, "Paused", timeout: 10, daemon)
            browser.stop()
            try mpv.awaitStatus("Playing", timeout: 10)
            return
        }
        // Two bursts and two pauses, in 100 ms windows: the far end, and the music under it.
        let recording = try record(seconds: 8.5)
        let voice = try recording.levels(Self.callBand, every: 0.1)
        let music = try recording.levels(Tone.musicBand, every: 0.1)
        let heard = voice.map { $0 > -30 }
        let shown = zip(voice, music).enumerated().map { "\($0.offset * 100) ms: voice \(Int($0.element.0)) music \(Int($0.element.1))" }
        #expect(heard.filter { $0 }.count >= 15 && heard.filter { !$0 }.count >= 15,
                "the recording holds no burst and pause: \(shown)")
        // Back within 1.5 s of each pause (15 windows): the drop-in's 150 ms ramp starts once the meter has
        // heard 400 ms of silence, which on PipeWire (a delivery of peaks every 171 ms) takes 0.5-0.8 s after
        // the pause; seen here 0.6-0.7 s on PulseAudio and 0.7-0.9 s on PipeWire to the first window at the
        // music's level, and a 1 s bound failed a clean clone's CI. Still short of the next burst, 2 s in, so
        // music left ducked through a pause fails. A pause is judged only where the recording goes on past
        // that: one in its last 1.5 s says nothing of the music's return (the bursts' phase against the
        // recording follows how long the call took to be known). Bursts every 4 s in 8.5 s leave at least one.
        let within = 15
        var pauses = 0
        for index in heard.indices.dropFirst() where heard[index - 1] && !heard[index] && index + within < heard.count {
            pauses += 1
            let back = music[index...].firstIndex { abs($0 - before) < 1 }
            #expect(back.map { $0 - index <= within } == true,
                    "the music was not back within 1.5 s of the pause at \(index * 100) ms: \(shown)")
        }
        #expect(pauses >= 1, "no pause with 1.5 s of the recording after it: \(shown)")
        // Heard for 500 ms and more (the meter's verdict, then the 200 ms duck): ducked by about the drop-in's 20 dB.
        // Judged as a whole by the median; a single window may read a few dB high where a click of the far
        // end's (the browser's audio running late on a loaded machine) spreads into the music's band (seen
        // on PipeWire: -24 dB among windows of -30 dB, the duck 20 dB under -11 dB). Let go, the music would
        // climb back over the 1 s restore, far above the bound each window is held to.
        let ducked = heard.indices.dropFirst(5).filter { heard[$0 - 5...$0].allSatisfy { $0 } }
        for index in ducked {
            #expect(music[index] < before - 10, "not ducked \(index * 100) ms in: \(shown)")
        }
        let levels = ducked.map { music[$0] }.sorted()
        if !levels.isEmpty {
            #expect(levels[levels.count / 2] < before - 15, "not ducked by the drop-in's 20 dB: \(shown)")
        }
        #expect(try mpv.status() == "Playing", "the call paused the music")
        browser.stop()
        try awaitMusicRestored(mpv, to: own)
    }

    // MARK: - Speech and event sounds

    @Test("speech-dispatcher: the screen reader ducks the music while it speaks, is never ducked, and the music comes back",
          .needs(RealApp.missing))
    func screenReaderDucksMusicAndIsNeverDucked() throws {
        let (daemon, mpv, own, _) = try musicUnderDaemon()
        let speech = try RealApp.speak(["This is the screen reader speaking over your music, for a few seconds.",
                                        "And a second phrase after a pause."], gap: 3)
        _ = try speech.awaitStream(changes: changes, timeout: 30) {
            $0["application.name"]?.hasPrefix("speech-dispatcher") == true
        }
        // The voice's lasting stream: its first phrase may open a stream and close it within 40 ms first
        // (seen on PipeWire), so the one to follow is the one the daemon has as a screen reader.
        // It must still be on the server when looked up: a short-lived one may be gone by then (seen on a
        // loaded PulseAudio run), and the next one is waited for instead.
        var found: ServerStream?
        try awaitStatus(daemon, "the voice to be a screen reader, still playing", timeout: 10) { status in
            let index = status.streams.last { $0.application.hasPrefix("speech-dispatcher") && $0.class == "speech" }?.index
            found = index.flatMap { try? SoundServer.stream($0) }
            return found != nil
        }
        let voice = try #require(found)
        let voiceOwn = voice.volume
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

    @Test("interrupt --wait-for-call: a line asked to be spoken during a call is spoken only once the call has ended (control: without the flag it is spoken at once, over the call)",
          .needs(RealApp.missing), arguments: [true, false])
    func spokenLineWaitsForTheCall(waits: Bool) throws {
        let daemon = try startDaemon()
        let call = try play(.long, role: "phone", name: "call")
        let callIndex = try #require(call.index)
        try awaitClass(daemon, callIndex, "call")
        let wrapper = [TestEnvironment.daemonBinary, "interrupt", "--socket", daemon.socketPath, "--class", "short"]
            + (waits ? ["--wait-for-call"] : []) + ["--"]
        let speech = try RealApp.speak(["Your reminder, now that the call is over."], gap: 0, under: wrapper)
        let isVoice = { (properties: [String: String]) in properties["application.name"]?.hasPrefix("speech-dispatcher") == true }
        if waits {
            // The call goes on: nothing speaks (the command, speech-dispatcher and all, has not started).
            try changes.watch(for: 4) {
                let voices = try SoundServer.streams().filter { isVoice($0.properties) }
                try #require(voices.isEmpty, "a voice spoke over the call: \(voices)")
            }
            #expect(daemon.log.contains { $0.contains("waits for the call to end") }, "\(daemon.logText)")
            // `status` lists the request as waiting, with its class.
            let status = try daemon.status()
            let waiting = status.streams.filter { $0.state == .waiting }
            #expect(waiting.count == 1 && waiting.first?.class == "short" && waiting.first?.hook != nil,
                    "\(DaemonTests.describe(status))")
            call.stop()
            try events.awaitRemoval(of: callIndex, timeout: 10)
            _ = try speech.awaitStream(changes: changes, timeout: 30, isVoice)
        } else {
            _ = try speech.awaitStream(changes: changes, timeout: 30, isVoice)
            #expect(try SoundServer.stream(callIndex) != nil, "the call ended before the voice began: the control shows nothing")
            call.stop()
        }
        #expect(try speech.awaitExit(timeout: 40) == 0, "interrupt's exit status")
    }

    @Test("libcanberra: an event sound is a notification: a light duck, restored exactly, never a pause",
          .needs(RealApp.missing))
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
    func awaitPlayer(_ mpv: MPV, _ status: String, timeout: Double, _ daemon: DaemonProcess) throws {
        do {
            try mpv.awaitStatus(status, timeout: timeout)
        } catch {
            throw CommandFailure(description: "\(error)\ndaemon log:\n" + daemon.log.suffix(40).joined(separator: "\n"))
        }
    }
}
