import AudioPolicy
import Foundation
import Testing
import TestRequirements

// Output loss on a real server (PulseAudio, and PipeWire through pipewire-pulse): a null sink carrying a
// Bluetooth headset's properties plays the part of the headset, mpv with MPRIS plays music on it, and the
// module is unloaded, as when the headset's battery dies. The server moves mpv's stream to the test sink
// (the default); the daemon must mute it at once and pause mpv. What the test sink's monitor recorded
// says how much music was heard on the "speakers". Null sinks have no ports: a jack pulled is tested
// against the fake server (OutputFakeServerTests).
//
//   eval "$(scripts/sound-server start pulseaudio /tmp/ow-pa)"
//   AUDIO_POLICYD_BIN=$PWD/.build/debug/audio-policyd swift test --skip-build --no-parallel --filter OutputTests
//   scripts/sound-server stop /tmp/ow-pa

@Suite(
    "Outputs: a headset that goes away, on a real server",
    .serialized,
    .needs(SessionBus.missing)
)
final class OutputTests {
    let changes = Changes()
    let events: ServerEvents
    private var daemons: [DaemonProcess] = []
    private var mpvs: [MPV] = []
    private var modules: [String] = []
    var children: [Child] = []

    static let address = "AC:80:0A:12:34:56"
    static let headsetProperties = "device.description=WH-1000XM4 device.string=\(address) api.bluez5.address=\(address) "
        + "device.bus=bluetooth device.form_factor=headset"

    init() throws {
        events = try ServerEvents(changes: changes)
        _ = try Monitor.shared.get()
        try SoundServer.awaitQuiet(changes: changes)
    }

    deinit {
        for daemon in daemons where daemon.isRunning { _ = daemon.terminate(timeout: 2) }
        mpvs.removeAll()
        children.removeAll()
        for module in modules { _ = try? run("pactl", "unload-module", module) }
    }

    /// Loads the headset: a null sink with a Bluetooth device's properties. Returns its module index.
    func loadHeadset() throws -> String {
        let module = try Self.loadHeadset(changes: changes)
        modules.append(module)
        return module
    }

    /// Loads the headset sink (`headset`) and waits for the server to list it. Returns its module index.
    static func loadHeadset(changes: Changes) throws -> String {
        let module = try run("pactl", "load-module", "module-null-sink", "sink_name=headset",
                             "sink_properties=\"\(headsetProperties)\"").trimmingCharacters(in: .whitespacesAndNewlines)
        try changes.await("the headset sink", timeout: 5) { () throws -> Probe<Void> in
            let sinks = try run("pactl", "list", "short", "sinks")
            return sinks.contains("headset") ? .done(()) : .waiting(sinks)
        }
        return module
    }

    /// The daemon, then mpv playing the music on the headset, Playing, and Now Playing.
    func mpvOnHeadset() throws -> (DaemonProcess, MPV) {
        let daemon = try DaemonProcess(changes: changes)
        daemons.append(daemon)
        let mpv = try MPV(.music, arguments: ["--audio-device=pulse/headset"], changes: changes)
        mpvs.append(mpv)
        try mpv.awaitStream()
        try mpv.awaitStatus("Playing")
        // At full volume, as the user left it: the server restores mpv's saved level, and a test before
        // this one whose daemon was killed mid-duck can leave it saved 60 dB down (a CI run heard nothing
        // on the speakers after the user's move with mpv playing and unmuted).
        let index = try mpv.stream().index
        _ = try run("pactl", "set-sink-input-volume", "\(index)", "100%")
        try changes.await("mpv at full volume", timeout: 5) { () throws -> Probe<Void> in
            let volume = try mpv.stream().volume
            return volume.raw.allSatisfy { $0 == UInt32(Volume.norm) } ? .done(()) : .waiting("\(volume.raw)")
        }
        try changes.await("mpv to own Now Playing", timeout: 5) { () throws -> Probe<Void> in
            let status = try daemon.status()
            return status.nowPlaying?.player == mpv.busName ? .done(()) : .waiting("\(status.nowPlaying as Any)")
        }
        return (daemon, mpv)
    }

    func sinkIndex(_ name: String) throws -> String? {
        try run("pactl", "list", "short", "sinks").split(separator: "\n")
            .first { $0.split(separator: "\t").dropFirst().first.map(String.init) == name }
            .flatMap { $0.split(separator: "\t").first.map(String.init) }
    }

    /// Milliseconds of the recording whose 10 ms blocks are above `threshold` dBFS (full band: nothing but
    /// the music plays on the test sink).
    static func loudMilliseconds(_ recording: Recording, above threshold: Double = -40) throws -> Int {
        let data = try Data(contentsOf: recording.file)
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let block = Levels.rate / 100 * Levels.channels
        var loud = 0
        var start = 0
        while start + block <= samples.count {
            var sum = 0.0
            for sample in samples[start..<(start + block)] { sum += Double(sample) * Double(sample) }
            let rms = (sum / Double(block)).squareRoot()
            if rms > 0, 20 * log10(rms) > threshold { loud += 10 }
            start += block
        }
        return loud
    }

    @Test("the headset goes away: mpv is Paused, and the speakers play at most 100 ms of the music above -40 dBFS")
    func headsetGoesAway() throws {
        let module = try loadHeadset()
        let (daemon, mpv) = try mpvOnHeadset()
        let mark = daemon.logCount
        // Unloaded 0.5 s into a 3 s recording of the test sink (the speakers).
        let unload = try Child(["sh", "-c", "sleep 0.5; pactl unload-module \(module)"])
        children.append(unload)
        let recording = try Levels.record(seconds: 3)
        modules.removeAll { $0 == module }
        try mpv.awaitStatus("Paused", timeout: 3)
        try daemon.awaitLog("went away", after: mark)
        let loud = try Self.loudMilliseconds(recording)
        print("output loss (\(TestEnvironment.variables["AUDIO_POLICYD_SERVER_KIND"] ?? "?")): \(loud) ms of music above -40 dBFS on the speakers")
        #expect(loud <= 100, "\(loud) ms of music above -40 dBFS on the speakers")
        // Paused, on the speakers, unmuted for when the user presses play.
        try changes.await("mpv's stream unmuted again", timeout: 3) { () throws -> Probe<Void> in
            let stream = try mpv.stream()
            return !stream.muted ? .done(()) : .waiting("\(stream)")
        }
        let status = try daemon.status()
        #expect(status.nowPlaying?.player == mpv.busName, "Now Playing left the paused app")
    }

    @Test("control: a profile switch (unloaded, the same device loaded again at once, the stream moved back): mpv keeps playing at its level")
    func profileSwitch() throws {
        let module = try loadHeadset()
        let (_, mpv) = try mpvOnHeadset()
        let index = try mpv.stream().index
        let switchScript = "pactl unload-module \(module); "
            + "pactl load-module module-null-sink sink_name=headset 'sink_properties=\"\(Self.headsetProperties)\"'; "
            + "pactl move-sink-input \(index) headset"
        let output = try run("sh", "-c", switchScript)
        if let again = output.split(separator: "\n").last.map(String.init) { modules = [again] }
        try changes.watch(for: 2.5) {
            let now = try mpv.status()
            try #require(now == "Playing", "mpv is \(now) after a profile switch")
        }
        let stream = try mpv.stream()
        #expect(!stream.muted, "left muted: \(stream)")
    }

    @Test("control: the user moves mpv off the headset to the speakers: it keeps playing, unmuted")
    func userMove() throws {
        _ = try loadHeadset()
        let (daemon, mpv) = try mpvOnHeadset()
        let index = try mpv.stream().index
        let speakers = try #require(try sinkIndex(SoundServer.sink).flatMap { UInt32($0) })
        try UserMove.move(index, to: SoundServer.sink, sinkIndex: speakers, changes: changes) { try mpv.stream() }
        try changes.watch(for: 2.5) {
            let now = try mpv.status()
            try #require(now == "Playing", "mpv is \(now) after the user's move")
        }
        let recording = try Levels.record(seconds: 0.5)
        let state = "\(String(describing: try? mpv.stream())); sinks: \((try? run("pactl", "list", "short", "sinks")) ?? ""); "
            + "\((try? run("pactl", "list", "sink-inputs")) ?? ""); the daemon's log:\n\(daemon.log.suffix(30).joined(separator: "\n"))"
        #expect(try recording.level(300...600) > -30, "the music is not heard on the speakers after the user's move: \(state)")
        // The control for the loss test's measure: music playing on the speakers counts as loud throughout.
        let loud = try Self.loudMilliseconds(recording)
        #expect(loud >= 400, "only \(loud) ms of 750 recorded counted as music above -40 dBFS")
        #expect(try !mpv.stream().muted)
    }
}
