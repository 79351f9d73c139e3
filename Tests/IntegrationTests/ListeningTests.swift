import AudioPolicy
import Foundation
import Testing
import TestRequirements

// Apps that listen, on the real server: a recorder with no playback of its own (parecord on both servers,
// PipeWire's own pw-record on PipeWire) records from a microphone while mpv (MPRIS) plays music. With
// the listening drop-in the music is ducked by its 20 dB while the recorder records and is back at
// exactly its level once it stops; with the default policy (the control) it stays at its level all along.
// Asserted: what the server reports (mpv's volume), what playerctl says (Playing) and what the sink played
// (the music's band on its monitor). The microphone is a source of the test's own (null source, or
// pipewire-pulse's virtual one): the server has no other input, and a sink's monitor is no microphone.

extension MPRISTests {
    /// The recorders each server runs: parecord (libpulse) on both; pw-record (PipeWire's own API,
    /// announced through pipewire-pulse like any node) on PipeWire.
    static var listeners: [String] {
        TestEnvironment.serverKind == "pipewire" ? ["parecord", "pw-record"] : ["parecord"]
    }

    /// The microphone the tests record from.
    static let microphone = "policy_microphone"

    @Test("apps that listen: with the listening drop-in, a recorder with no playback of its own ducks the music by 20 dB while it records from the microphone, and the music is back at exactly its level once it stops (control: the default policy leaves the music at its level)",
          arguments: listeners, [true, false])
    func listeningAppDucksMusic(listener: String, dropIn: Bool) throws {
        let module = try SoundServer.loadMicrophone(named: Self.microphone)
        defer { SoundServer.unloadModule(module) }
        let policy = dropIn ? TestEnvironment.packageRoot.appendingPathComponent("policies/listening.toml").path : nil
        let (daemon, mpv, own, before) = try musicUnderDaemon(policy: policy)
        try #require(before > -40, "the music is not heard in the monitor (\(before) dB): nothing to measure a duck by")
        // `record` writes what follows as a fixture, for the drop-in's case to replay.
        let folder = try TestEnvironment.temporaryFolder("audio-policyd-listen")
        defer { try? FileManager.default.removeItem(at: folder) }
        let session = folder.appendingPathComponent("session.toml").path
        let recording = dropIn ? try startRecord(daemon, to: session) : nil
        let recorder = try startRecording(listener, into: folder)
        defer { recorder.kill() }
        // The engine takes the capture for an app recording from a microphone (a decision it logs).
        let counted = try daemon.awaitLog(": recording from a microphone", timeout: 10)
        #expect(counted.contains("(\(listener))"), "\(counted)")
        let tag = "[\(TestEnvironment.serverKind)] \(listener)\(dropIn ? "" : " (default policy)")"
        guard dropIn else {
            // Control: past the drop-in's duck ramp twice over, the music plays on at its level.
            try expectStays(mpv, "Playing", for: 1, "a recording paused the music under the default policy")
            let now = try mpv.stream()
            #expect(DaemonTests.matches(now.volume, own) && !now.muted, "the music was changed: \(now)")
            let level = try record(seconds: 1).level(Tone.musicBand)
            print("\(tag): music \(String(format: "%.2f", level - before)) dB from its level while it records")
            #expect(abs(level - before) < 0.5, "music at \(before) dB before the recording, \(level) dB during it")
            #expect(try daemon.status().streams.allSatisfy { $0.class != "listening" })
            return
        }
        try awaitStatus(daemon, "the recording to listen", timeout: 5) { status in
            status.streams.contains { $0.hook?.hasPrefix("capture-") == true && $0.class == "listening"
                && $0.application == listener }
        }
        let ducked = DaemonTests.volume(own, at: -20)
        try awaitStream(mpv, "ducked to -20 dB while \(listener) records", timeout: 5) {
            DaemonTests.matches($0.volume, ducked)
        }
        let under = try record(seconds: 1).level(Tone.musicBand)
        print("\(tag): music \(String(format: "%.2f", under - before)) dB from its level while it records")
        #expect(abs(under - before + 20) < 1, "music at \(before) dB before, \(under) dB while \(listener) records")
        #expect(try mpv.status() == "Playing", "the drop-in ducks the music; it does not pause it")
        #expect(try daemon.status().nowPlaying?.player == mpv.busName, "a recording never takes Now Playing")
        // It stops recording: the music comes back after the class's hold (500 ms) and restore (1 s).
        #expect(recorder.stop() != nil, "\(listener) did not stop")
        let stopped = Date()
        try awaitMusicRestored(mpv, to: own, timeout: 5)
        let restoredAfter = Date().timeIntervalSince(stopped)
        let after = try record(seconds: 0.5).level(Tone.musicBand)
        print("\(tag): back at its volume \(String(format: "%.2f", restoredAfter)) s after the recorder stopped; "
            + "music \(String(format: "%.2f", after - before)) dB from its level")
        #expect(restoredAfter >= 1.2 && restoredAfter < 3, "restored \(restoredAfter) s after the recording stopped")
        #expect(abs(after - before) < 0.5, "music at \(before) dB before, \(after) dB after the recording")
        #expect(try mpv.status() == "Playing")
        #expect(daemon.log.contains { $0.contains("interrupted by class listening") }, "\(daemon.logText)")
        try expectRecorded(session, by: try #require(recording), listener: listener, music: try #require(mpv.index))
    }

    /// `audio-policyd record` of `daemon`'s session into `file`, once it says it records; its standard
    /// error stays open with it (closed, its last words on SIGINT would kill it with SIGPIPE).
    private func startRecord(_ daemon: DaemonProcess, to file: String) throws -> (child: Child, errors: Pipe) {
        let errors = Pipe()
        let child = try Child([TestEnvironment.daemonBinary, "record", "--socket", daemon.socketPath, "-o", file],
                              standardError: errors)
        children.append(child)
        let ready = Self.readLine(errors, timeout: 10)
        try #require(ready.contains("recording"), "record did not start: \(ready)")
        return (child, errors)
    }

    /// `record`'s file of the session (ended by SIGINT) holds the capture and mpv ducked; replayed it is
    /// green, and red against the default policy (the control), which leaves recordings alone.
    private func expectRecorded(_ file: String, by recording: (child: Child, errors: Pipe), listener: String,
                                music: UInt32) throws {
        recording.child.signal(SIGINT)
        #expect(recording.child.wait(timeout: 10) == 0, "record did not end cleanly on SIGINT")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let fixture = try FixtureLoader.load(text: text, file: file)
        #expect(fixture.steps.contains { step in
            if case let .event(.capture(_, properties, _, _)) = step.action { return properties["application.name"] == listener }
            return false
        }, "the recording is missing:\n\(text)")
        #expect(fixture.steps.contains { if case .event(.captureEnded) = $0.action { true } else { false } }, "\(text)")
        let replay = try Self.runTest([file])
        #expect(replay.code == 0 && replay.output.contains("1 passed, 0 failed"), "\(replay.output)\n\(text)")
        let policy = TestEnvironment.packageRoot.appendingPathComponent("policies/default.toml").path
        let control = try Self.runTest(["--policy", policy, file])
        #expect(control.output.contains("stream \"\(music)\" state: expected ducked, got playing"), "\(control.output)")
    }

    /// `listener` recording from ``microphone`` into nothing that plays, stopped by SIGTERM as a user's
    /// Ctrl-C or a dictation tool stops it (with the signals at their defaults: the test's own mask
    /// blocks SIGTERM).
    private func startRecording(_ listener: String, into folder: URL) throws -> Child {
        var environment = ProcessInfo.processInfo.environment
        let arguments: [String]
        if listener == "pw-record" {
            // PipeWire's own clients find its socket in XDG_RUNTIME_DIR, which scripts/sound-server keeps
            // in its folder and does not export.
            environment["XDG_RUNTIME_DIR"] = try SoundServerProcess.current().directory + "/runtime"
            let output = folder.appendingPathComponent("heard.wav")
            arguments = ["pw-record", "--target", Self.microphone, output.path]
        } else {
            arguments = ["parecord", "-d", Self.microphone, "/dev/null"]
        }
        let child = try Child(arguments, environment: environment, defaultSignals: true)
        children.append(child)
        return child
    }
}
