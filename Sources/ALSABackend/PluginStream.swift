import AudioPolicy
import EventLoop
import SoundBackend

/// What the daemon knows of one plugin stream, and how it reads as a sound server's stream.
///
/// The daemon speaks in sink inputs and source outputs (``StreamServer``); an ALSA stream becomes one
/// with the properties a policy matches on, taken from the plugin's HELLO and the socket's peer: the
/// pid (`SO_PEERCRED`), the binary, the application name (the app's, else the binary: the engine goes
/// by it) and the PCM's class hint as ``classKey``, so that `pcm.audiopolicy_navigation` gives the
/// navigation class through the policy's rules, not a decision made here. Its volume is the daemon's
/// last write (one channel: the plugin applies one gain), unity until then.
struct PluginStream {
    /// The property that carries the PCM's `class` hint (policies/default.toml matches it).
    static let classKey = "alsa.class"
    /// The property that carries the ALSA PCM name the app opened.
    static let pcmKey = "alsa.pcm"
    /// One channel, `PA_CHANNEL_POSITION_MONO`.
    static let channelMap: [Int32] = [0]

    let index: UInt32
    let pid: Int32
    let hello: PluginMessage.Hello
    var format: PluginMessage.Format?
    var state: PluginMessage.StreamState = .open {
        didSet {
            if state != .running { runningSince = nil } else if oldValue != .running { runningSince = MainLoop.monotonicMicroseconds() }
        }
    }
    /// When it started running (monotonic µs): its position counts frames from about then.
    private(set) var runningSince: UInt64?
    /// The volume the daemon last set (unity until it sets one).
    var volume = ChannelVolumes(uniform: ChannelVolumes.norm, channels: 1, channelMap: PluginStream.channelMap)
    var muted = false

    init(index: UInt32, pid: Int32, hello: PluginMessage.Hello) {
        self.index = index
        self.pid = pid
        self.hello = hello
    }

    var isCapture: Bool { hello.direction == .capture }

    /// When the frames written up to `position` will have been heard (monotonic µs), for a stream that
    /// has run at its rate since it started: an app that writes ahead is heard long after it wrote.
    func heardUntil(position: UInt64) -> UInt64? {
        guard let runningSince, let rate = format?.rate, rate > 0 else { return nil }
        return runningSince &+ position &* 1_000_000 / UInt64(rate)
    }

    /// Playing, for the engine: the plugin saw samples go through since the last prepare. Open, set up
    /// and prepared streams make no sound yet (and a paused one shows as its peak reports stopping).
    var corked: Bool { state != .running }

    var properties: [String: String] {
        let direction = isCapture ? "Capture" : "Playback"
        var properties = ["application.process.id": String(pid), "media.name": "ALSA \(direction)",
                          Self.pcmKey: hello.pcmName]
        if !hello.binary.isEmpty { properties["application.process.binary"] = hello.binary }
        let name = hello.application.isEmpty ? hello.binary : hello.application
        if !name.isEmpty { properties["application.name"] = name }
        if !hello.classHint.isEmpty { properties[Self.classKey] = hello.classHint }
        return properties
    }

    /// The stream as a sink input (playback), with who changed its level last.
    func sinkInput(levelChange: SinkInput.LevelChange = .none) -> SinkInput {
        SinkInput(index: index, clientIndex: nil, sinkIndex: 0, name: "ALSA Playback", properties: properties,
                  volume: volume, muted: muted, corked: corked, levelChange: levelChange)
    }

    /// The stream as a source output (capture): an app recording from a microphone while it runs.
    var sourceOutput: SourceOutput {
        SourceOutput(index: index, clientIndex: nil, sourceIndex: 0, properties: properties, corked: corked,
                     monitoredSink: nil)
    }

    /// The plugin's linear gain for `factor` of the own level `own`: the factor times the channels' mean
    /// amplitude (the plugin has one gain), never above unity (the plugin only lowers and restores).
    static func gain(_ factor: Double, of own: ChannelVolumes) -> Float {
        Float(min(1, max(0, factor * own.averageLinear)))
    }
}
