@testable import ALSABackend
import AudioPolicy
@testable import AudioPolicyDaemon
import EventLoop
import Foundation
import Glibc
import PulseBackend
import SoundBackend
import Testing

/// The ALSA backend on a real socket, with ``PluginClient`` in the plugin's place: what it reports to the
/// daemon, what it sends the plugin, and a daemon on it ducking one client for another.
@Suite("ALSA backend", .serialized)
struct ALSAPluginServerTests {
    /// A backend on its own loop and socket, recording what it reports.
    final class Harness {
        let loop = MainLoop()
        let scratch: ScratchDirectory
        let server: ALSAPluginServer
        var states: [PulseConnection.State] = []
        var added: [SinkInput] = []
        var changed: [SinkInput] = []
        var removed: [UInt32] = []
        var captures: [SourceOutput] = []
        var capturesRemoved: [UInt32] = []
        var initialDeliveries = 0
        var errors: [String] = []

        init() throws {
            scratch = try ScratchDirectory()
            server = ALSAPluginServer(loop: loop, socketPath: scratch.url.appendingPathComponent("run/alsa").path,
                                      rampMilliseconds: 15)
            server.onNews = { [unowned self] news in
                switch news {
                case let .state(state): states.append(state)
                case let .initialStreams(list): initialDeliveries += 1; #expect(list.isEmpty)
                case let .initialCaptures(list): initialDeliveries += 1; #expect(list.isEmpty)
                case let .streamAdded(input): added.append(input)
                case let .streamChanged(input): changed.append(input)
                case let .streamRemoved(index): removed.append(index)
                case let .captureAdded(capture): captures.append(capture)
                case let .captureRemoved(index): capturesRemoved.append(index)
                case let .error(message): errors.append(message)
                case .captureChanged, .sinkAdded, .sinkChanged, .sinkRemoved: break
                }
            }
            server.connect()
            #expect(loop.iterate(until: { self.server.isReady }))
        }

        func client() throws -> PluginClient {
            try PluginClient(path: server.socketPath, loop: loop)
        }

        /// A client whose stream has said HELLO and been announced, the stream's index, and its unity level.
        func announcedClient() throws -> (PluginClient, UInt32, ChannelVolumes) {
            let client = try client()
            client.send(PluginClient.hello())
            let count = added.count
            #expect(run { self.added.count == count + 1 })
            return (client, try #require(added.last).index, ChannelVolumes(values: [ChannelVolumes.norm], channelMap: [0]))
        }

        /// A client whose stream has said HELLO and RUNNING, and the stream's index.
        func playingClient() throws -> (PluginClient, UInt32) {
            let client = try client()
            client.send(PluginClient.hello())
            client.send(PluginClient.state(.running))
            let count = changed.count
            #expect(run { self.changed.count == count + 1 })
            return (client, try #require(added.last).index)
        }

        @discardableResult
        func run(until condition: () -> Bool) -> Bool {
            loop.iterate(until: condition, timeout: 5)
        }
    }

    @Test("connect: .ready, the empty initial lists, then a 0600 socket; stopServing removes it")
    func ready() throws {
        let harness = try Harness()
        #expect(harness.states == [.connecting, .ready])
        #expect(harness.initialDeliveries == 2)
        #expect(harness.server.serverDescription == "alsa (audio-policyd plugin)")
        var info = stat()
        #expect(stat(harness.server.socketPath, &info) == 0)
        #expect(info.st_mode & S_IFMT == S_IFSOCK && info.st_mode & 0o777 == 0o600)
        harness.server.stopServing()
        #expect(access(harness.server.socketPath, F_OK) != 0)
    }

    @Test("a stale socket file is replaced at start")
    func staleSocket() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.url.appendingPathComponent("alsa").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data("stale".utf8)))
        let loop = MainLoop()
        let server = ALSAPluginServer(loop: loop, socketPath: path, rampMilliseconds: 15)
        server.connect()
        #expect(loop.iterate(until: { server.isReady }, timeout: 5))
        #expect(try PluginClient(path: path, loop: loop).fd >= 0)
    }

    @Test("HELLO makes a sink input: pid by SO_PEERCRED, binary, app name (else the binary), class hint; RUNNING uncorks; EOF ends it")
    func streamLifecycle() throws {
        let harness = try Harness()
        let client = try harness.client()
        client.send(.format(.init(rate: 48000, channels: 2, sampleFormat: .s16, bufferFrames: 4096, periodFrames: 1024)))
        harness.run(for: 0.05)
        #expect(harness.added.isEmpty, "nothing is a stream before its HELLO")
        client.send(PluginClient.hello(binary: "aplay", classHint: "navigation"))
        #expect(harness.run { harness.added.count == 1 })
        let input = try #require(harness.added.first)
        #expect(input.properties["application.process.id"] == String(getpid()))
        #expect(input.processBinary == "aplay" && input.applicationName == "aplay")
        #expect(input.properties["alsa.class"] == "navigation")
        #expect(input.corked && input.volume.values == [ChannelVolumes.norm] && !input.muted)
        #expect(harness.run { client.received == [.meter(intervalMilliseconds: PluginMessage.meterOff)] })

        client.send(PluginClient.state(.prepared))
        client.send(PluginClient.state(.running))
        #expect(harness.run { harness.changed.last?.corked == false })
        #expect(harness.changed.count == 1, "prepared is as corked as setup: no change")

        let named = try harness.client()
        named.send(PluginClient.hello(binary: "mpv", application: "Music Box"))
        #expect(harness.run { harness.added.count == 2 })
        #expect(harness.added[1].applicationName == "Music Box" && harness.added[1].properties["alsa.class"] == nil)
        #expect(harness.added[1].index != input.index)

        client.close()
        #expect(harness.run { harness.removed == [input.index] })
        named.send(PluginClient.state(.closed))
        #expect(harness.run { harness.removed == [input.index, harness.added[1].index] })
        let again = try harness.client()
        again.send(PluginClient.hello())
        #expect(harness.run { harness.added.count == 3 })
        #expect(!harness.added.prefix(2).map(\.index).contains(harness.added[2].index), "indexes are never reused")
    }

    @Test("a capture PCM is a capture, recording while it runs")
    func capture() throws {
        let harness = try Harness()
        let client = try harness.client()
        client.send(PluginClient.hello(binary: "arecord", direction: .capture))
        #expect(harness.run { harness.captures.count == 1 })
        #expect(harness.added.isEmpty && harness.captures[0].corked && !harness.captures[0].isMonitor)
        client.close()
        #expect(harness.run { harness.capturesRemoved == [harness.captures[0].index] })
    }

    @Test("setGain sends SET_GAIN (the factor times the own level's linear amplitude, with no cubic round trip; the daemon's step as the ramp) and echoes it as ours; setMute sends MUTE")
    func writes() throws {
        let harness = try Harness()
        let (client, index, unity) = try harness.announcedClient()
        harness.server.setGain(harness.server.playbackID(index), own: unity, factor: 0.1)
        #expect(harness.changed.isEmpty, "the echo comes on a later turn, not inside the call")
        #expect(harness.run { client.lastGain != nil && harness.changed.count == 1 })
        let gain = try #require(client.lastGain)
        // Exactly the factor: through a cubic volume and back it is 0.1 only to a raw unit.
        #expect(gain.gain == Float(0.1) && gain.ramp == 15)
        #expect(Float(unity.scaled(by: 0.1).averageLinear) != Float(0.1), "the control: the cubic round trip is not exact")
        #expect(harness.changed[0].levelChange == .ours && harness.changed[0].volume == unity.scaled(by: 0.1))

        // An own level below unity (50 %, cubic: 0.125 linear) scales the factor.
        harness.server.setGain(harness.server.playbackID(index), own: ChannelVolumes(values: [ChannelVolumes.norm / 2], channelMap: [0]), factor: 0.5)
        #expect(harness.run { harness.changed.count == 2 })
        #expect(client.lastGain?.gain == Float(0.0625))

        harness.server.setGain(harness.server.playbackID(index), own: ChannelVolumes(values: [0x20000, 0x20000]), factor: 1)
        #expect(harness.run { harness.changed.count == 3 })
        #expect(client.lastGain?.gain == 1, "never above unity")

        harness.server.setMute(harness.server.playbackID(index), muted: true)
        #expect(harness.run { client.received.last == .mute(true, fadeMilliseconds: ALSAPluginServer.muteFade) })
        #expect(harness.run { harness.changed.count == 4 })
        #expect(harness.changed[3].muted && harness.changed[3].levelChange == .ours)

        let errorsBefore = harness.errors.count
        harness.server.setGain(harness.server.playbackID(999), own: unity, factor: 0.1)
        #expect(harness.errors.count == errorsBefore + 1)
    }

    @Test("a write that names a live stream's index on another server instance (a run of the daemon before) reaches no stream and is told as an error; control: the same index on this instance is written")
    func writesOfAnotherInstance() throws {
        let harness = try Harness()
        let (client, index, unity) = try harness.announcedClient()
        var other = harness.server.instance
        other.number &+= 1
        let stale = StreamID.playback(index, on: other)
        #expect(harness.server.playbackIndex(of: stale) == nil && !harness.server.rampsByItself(stale))
        let errorsBefore = harness.errors.count
        harness.server.setGain(stale, own: unity, factor: 0.1)
        harness.server.setMute(stale, muted: true)
        #expect(harness.server.meter(stale, sink: 0) { _ in } == nil)
        #expect(harness.errors.count == errorsBefore + 2)

        // The control, sent after them on the same connection: once it has arrived, so would have they.
        harness.server.setMute(harness.server.playbackID(index), muted: true)
        #expect(harness.run { client.received.last == .mute(true, fadeMilliseconds: ALSAPluginServer.muteFade) })
        #expect(client.lastGain == nil, "no SET_GAIN of the other instance's write")
        #expect(client.received.filter { if case .mute = $0 { true } else { false } }.count == 1)
        #expect(!client.received.contains(.meter(intervalMilliseconds: PeakFeed.interval)), "no meter started")
    }

    @Test("rampGain sends one RAMP (the factor, the whole duration, the daemon's floor) to a plugin that names the feature; control: an older plugin gets SET_GAIN to the target")
    func wholeRamps() throws {
        let harness = try Harness()
        let modern = try harness.client()
        modern.send(PluginClient.hello(features: .ramp))
        #expect(harness.run { harness.added.count == 1 })
        let older = try harness.client()
        older.send(PluginClient.hello())
        #expect(harness.run { harness.added.count == 2 })
        let (modernIndex, olderIndex) = (harness.added[0].index, harness.added[1].index)
        #expect(harness.server.rampsByItself(harness.server.playbackID(modernIndex)) && !harness.server.rampsByItself(harness.server.playbackID(olderIndex)))
        #expect(!harness.server.rampsByItself(harness.server.playbackID(999)))

        let own = ChannelVolumes(values: [ChannelVolumes.norm], channelMap: [0])
        harness.server.rampGain(harness.server.playbackID(modernIndex), own: own, to: 0.1, over: 299.5)
        #expect(harness.run { !modern.ramps.isEmpty && harness.changed.count == 1 })
        let ramp = try #require(modern.ramps.first)
        #expect(ramp.gain == 0.1 && ramp.ramp == 300 && ramp.floor == Float(Level.floorDecibels))
        #expect(modern.lastGain == nil, "no SET_GAIN besides")
        #expect(harness.changed[0].levelChange == .ours && harness.changed[0].volume == own.scaled(by: 0.1),
                "echoed as ours, at the target")

        harness.server.rampGain(harness.server.playbackID(olderIndex), own: own, to: 0.1, over: 300)
        #expect(harness.run { older.lastGain != nil })
        #expect(older.ramps.isEmpty && older.lastGain?.gain == Float(0.1) && older.lastGain?.ramp == 15)
    }

    @Test("meter: METER at the feed's interval, peaks after the gain, back to idle reporting when closed")
    func metering() throws {
        let harness = try Harness()
        let (client, index) = try harness.playingClient()
        var peaks: [Float] = []
        let meter = try #require(harness.server.meter(harness.server.playbackID(index), sink: 0) { peaks.append($0) })
        #expect(harness.run { client.received.last == .meter(intervalMilliseconds: PeakFeed.interval) })
        client.send(.peak(.init(peakIn: 0.5, peakOut: 0.05, frames: 7200, position: 7200)))
        #expect(harness.run { peaks == [0.05] })
        meter.close()
        #expect(harness.run { client.received.last == .meter(intervalMilliseconds: PluginMessage.meterOff) })
        client.send(.peak(.init(peakIn: 0.5, peakOut: 0.5, frames: 7200, position: 14400)))
        harness.run(for: 0.1)
        #expect(peaks == [0.05])
    }

    @Test("a stalled running stream (no PEAK) reads as silence after three intervals; control: reports keep it quiet")
    func stall() throws {
        let harness = try Harness()
        let (client, index) = try harness.playingClient()
        var peaks: [Float] = []
        let meter = harness.server.meter(harness.server.playbackID(index), sink: 0) { peaks.append($0) }
        // Control: reports every interval, no silence is made up.
        for _ in 0..<5 {
            client.send(.peak(.init(peakIn: 0.5, peakOut: 0.5, frames: 7200, position: 0)))
            harness.run(for: Double(PeakFeed.interval) / 1000)
        }
        #expect(!peaks.isEmpty && !peaks.contains(0))
        peaks = []
        #expect(harness.run { peaks.contains(0) })
        _ = meter
    }

    @Test("garbage is ignored without dropping the daemon; a connection that keeps sending it is closed")
    func garbage() throws {
        let harness = try Harness()
        let client = try harness.client()
        client.send(PluginClient.hello())
        #expect(harness.run { harness.added.count == 1 })
        for byte in 0..<10 { client.send(bytes: [UInt8](repeating: UInt8(byte), count: 24)) }
        client.send(bytes: Array(repeating: 0xff, count: 300))
        client.send(PluginClient.state(.running))
        #expect(harness.run { harness.changed.count == 1 }, "a good packet after garbage is still taken")
        #expect(!client.closedByDaemon)
        for _ in 0...ALSAPluginConnectionLimits.malformed { client.send(bytes: [1, 99, 4, 0]) }
        #expect(harness.run { client.closedByDaemon && harness.removed.count == 1 })
        // The backend serves on.
        let next = try harness.client()
        next.send(PluginClient.hello())
        #expect(harness.run { harness.added.count == 2 })
    }

    @Test("a connection that floods valid packets (over the limit in a second) is closed; control: a burst under it is not")
    func flood() throws {
        let harness = try Harness()
        let (client, _) = try harness.playingClient()
        let peak = PluginMessage.peak(.init(peakIn: 0.1, peakOut: 0.1, frames: 480, position: 0))
        // In chunks the socket buffer holds, read in between (a full buffer would drop the client's sends).
        func burst(_ count: Int) {
            for start in stride(from: 0, to: count, by: 100) {
                for _ in start..<min(count, start + 100) { client.send(peak) }
                harness.run(for: 0.005)
            }
        }
        burst(200)
        harness.run(for: 0.05)
        #expect(!client.closedByDaemon)
        burst(PluginConnection.floodLimit)
        #expect(harness.run { client.closedByDaemon && harness.removed.count == 1 })
    }

    @Test("nothing is saved on ALSA: the backend has no saved levels to read or repair")
    func savedEntries() throws {
        let harness = try Harness()
        #expect(harness.server.savedLevels == nil)
    }

    /// A daemon on the ALSA backend with one `aplay` stream playing (its plugin naming `features`), and
    /// nothing sent to it in 0.3 s but the idle METER.
    private func daemonWithMusic(features: PluginMessage.Hello.Features)
        throws -> (daemon: DaemonOnFake, socket: String, music: PluginClient, scratch: ScratchDirectory) {
        let scratch = try ScratchDirectory()
        let socket = scratch.url.appendingPathComponent("alsa").path
        let daemon = try DaemonOnFake(makeServer: { loop in
            ALSAPluginServer(loop: loop, socketPath: socket, rampMilliseconds: UInt32(RampStepper.stepInterval))
        }, directory: scratch.url)
        #expect(daemon.run(until: { daemon.isReady }))
        #expect(daemon.daemon.connectedServer == "alsa (audio-policyd plugin)")
        let music = try PluginClient(path: socket, loop: daemon.loop)
        music.send(PluginClient.hello(binary: "aplay", features: features))
        music.send(PluginClient.state(.running))
        #expect(daemon.run(until: { daemon.daemon.liveStreamCount == 1 }))
        // Control: nothing interrupts it, nothing is sent but the idle METER.
        daemon.run(for: 0.3)
        #expect(music.lastGain == nil && music.ramps.isEmpty)
        return (daemon, socket, music, scratch)
    }

    @Test("the daemon on ALSA: a navigation prompt ducks an ambient stream through SET_GAIN, and its end restores it")
    func daemonDucks() throws {
        let (daemon, socket, music, scratch) = try daemonWithMusic(features: [])
        defer { _ = scratch }

        // Another process (the engine never lets an app, told by its pid, interrupt itself): a
        // navigation prompt, by the PCM's class hint.
        let prompt = try PluginChild(path: socket, messages: [PluginClient.hello(binary: "espeak-ng", classHint: "navigation"),
                                                              PluginClient.state(.running)])
        #expect(daemon.run(until: { (music.lastGain?.gain ?? 1) < 0.11 }, timeout: 3), "ducked to -20 dB")
        let steps = music.received.filter { if case .setGain = $0 { true } else { false } }.count
        #expect(steps > 5, "the duck is ramped in the daemon's steps, each ramped by the plugin")
        #expect(music.lastGain?.ramp == UInt32(RampStepper.stepInterval))
        prompt.close()
        #expect(daemon.run(until: { music.lastGain?.gain == 1 }, timeout: 5), "restored when the prompt ends")
        prompt.close()
        music.close()
    }

    @Test("the daemon on ALSA, a plugin that ramps by itself: the duck is one RAMP, its end another; control: the older plugin above gets many SET_GAINs")
    func daemonHandsWholeRamps() throws {
        let (daemon, socket, music, scratch) = try daemonWithMusic(features: .ramp)
        defer { _ = scratch }

        let prompt = try PluginChild(path: socket, messages: [PluginClient.hello(binary: "espeak-ng", classHint: "navigation"),
                                                              PluginClient.state(.running)])
        #expect(daemon.run(until: { !music.ramps.isEmpty }, timeout: 3))
        let duck = try #require(music.ramps.first)
        #expect(abs(duck.gain - 0.1) < 0.001, "to -20 dB: \(duck.gain)")
        #expect(duck.ramp > 50 && duck.floor == Float(Level.floorDecibels), "the whole ramp: \(duck.ramp) ms")
        // Past the ramp's end: still the one message (a stepped duck sends one per 15 ms).
        daemon.run(for: Double(duck.ramp) / 1000 + 0.1)
        #expect(music.ramps.count == 1 && music.lastGain == nil)
        prompt.close()
        #expect(daemon.run(until: { music.ramps.count == 2 }, timeout: 5), "restored when the prompt ends")
        #expect(music.ramps.last?.gain == 1 && music.lastGain == nil)
        music.close()
    }
}

/// The connection limits, by a name the tests read.
enum ALSAPluginConnectionLimits {
    static let malformed = PluginConnection.malformedLimit
}

extension ALSAPluginServerTests.Harness {
    func run(for seconds: Double) {
        let start = MainLoop.monotonicMicroseconds()
        // The deadline ends the wait: the loop may have nothing else to wake it.
        loop.iterate(until: { MainLoop.monotonicMicroseconds() - start >= UInt64(seconds * 1_000_000) }, timeout: seconds)
    }
}
