import AudioPolicy
import EventLoop
import FoundationEssentials
import Glibc
import SoundBackend

/// The ALSA plugins in every client, as the daemon's sound server: what to act on when no sound server
/// runs.
///
/// With no PulseAudio or PipeWire, no process can change another's PCM; the plugin (`type audiopolicy`,
/// `Sources/CAudioPolicyALSAPlugin`) runs inside each client and connects here once per PCM. This serves
/// its socket (``PluginSocket``) on the daemon's loop and speaks ``StreamServer``, so the daemon, its
/// engine and its tests are the same on both backends:
///
/// - each connection that says HELLO is a sink input (a capture, for a capture PCM) with an index of
///   its own, never reused; RUNNING is uncorked; CLOSED or EOF (a client killed) ends it;
/// - a ramp goes to the plugin whole, as one RAMP, which the plugin follows sample by sample along the
///   daemon's curve (``rampsByItself(_:)``: a plugin whose HELLO names the feature; an older plugin is
///   written each step of the daemon's timer instead); `setGain` becomes SET_GAIN, ramped by the
///   plugin over ``rampMilliseconds`` (the daemon's ramp step); `setMute` becomes MUTE with a
///   ``muteFade`` fade. Each is echoed back as a change marked `.ours`, on a later turn of the loop, as a
///   sound server's CHANGE event would be;
/// - `meter` asks the plugin for a PEAK per ``PeakFeed/interval``; a stream nobody measures is told
///   ``PluginMessage/meterOff`` and reports nothing, so playing streams cost the daemon no wake-up;
/// - nothing is saved on ALSA (no stream-restore): the saved-entry list is empty and a write is taken
///   without doing anything, so the daemon's repairs have nothing to repair. There are no sinks.
///
/// Deliveries keep the pulse backend's order: `.ready`, the (empty) initial lists, then changes, each
/// on the loop and never inside the call that caused it.
public final class ALSAPluginServer: StreamServer {
    /// The fade of a MUTE (ms): the daemon fades a stream out before it mutes it, so this only keeps a
    /// mute from clicking.
    public static let muteFade: UInt32 = 20
    /// What ``serverDescription`` says.
    public static let description = "alsa (audio-policyd plugin)"

    // MARK: What the daemon hears

    public var onNews: (ServerNews) -> Void = { _ in }

    // MARK: State

    public private(set) var state: ConnectionState = .unconnected
    public var isReady: Bool { state == .ready }
    public private(set) var serverDescription: String?
    /// This server: its streams are numbered from 1 for its life, so another one (made after this one
    /// is done) is another instance, told apart by when it was made.
    public let instance: ServerInstance
    /// The socket path served.
    public let socketPath: String
    /// The ramp of each SET_GAIN (ms).
    public let rampMilliseconds: UInt32
    /// How many plugin streams (playback and capture) are known now.
    public var streamCount: Int { streams.count }

    private let loop: MainLoop
    private var socket: PluginSocket?
    private var listenerWatch: MainLoop.IOWatch?
    /// Accepted connections, by a number of their own (until HELLO they are no stream).
    private var connections: [Int: PluginConnection] = [:]
    private var nextConnection = 0
    /// Streams by connection number.
    private var streams: [Int: PluginStream] = [:]
    /// Connection numbers by stream index.
    private var byIndex: [UInt32: Int] = [:]
    private var feeds: [UInt32: PeakFeed] = [:]
    private var nextIndex: UInt32 = 1
    private let later: Postponed
    /// Streams whose level change is to be echoed on the next turn.
    private var pendingEchoes: Set<UInt32> = []

    /// - Parameters:
    ///   - socketPath: where to listen; nil: ``PluginSocket/defaultPath(environment:)``, where the plugin
    ///     looks by default.
    ///   - rampMilliseconds: the ramp the plugin gives each gain the daemon sets: the daemon's ramp step.
    public init(loop: MainLoop, socketPath: String? = nil, rampMilliseconds: UInt32) {
        self.loop = loop
        self.socketPath = socketPath ?? PluginSocket.defaultPath()
        self.rampMilliseconds = rampMilliseconds
        instance = ServerInstance(backend: .alsa, number: UInt32(truncatingIfNeeded: MainLoop.monotonicMicroseconds()))
        later = Postponed(loop: loop)
    }

    deinit {
        stopServing()
    }

    // MARK: - The connection

    /// Binds the socket; `.ready` (or `.failed`) follows on the loop.
    public func connect() {
        guard state == .unconnected else { return }
        state = .connecting
        onNews(.state(.connecting))
        do {
            socket = try PluginSocket(path: socketPath)
        } catch {
            state = .failed("\(error)")
            later.post { [weak self] in self?.onNews(.state(.failed("\(error)"))) }
            return
        }
        later.post { [weak self] in self?.becomeReady() }
    }

    private func becomeReady() {
        guard let socket, state == .connecting else { return }
        serverDescription = Self.description
        state = .ready
        onNews(.state(.ready))
        onNews(.initialStreams([]))
        onNews(.initialCaptures([]))
        // Only now: no stream may be announced before the initial lists.
        listenerWatch = MainLoop.IOWatch(loop: loop, fd: socket.fd, events: .readable) { [unowned self] _ in
            self.acceptAll()
        }
    }

    public func drain(_ completion: @escaping () -> Void) {
        // Every command went out when it was made: nothing is in flight.
        later.post(completion)
    }

    /// Closes every plugin connection (each ramps back to unity by itself) and removes the socket file.
    public func stopServing() {
        listenerWatch = nil
        for connection in connections.values { connection.close() }
        connections = [:]
        streams = [:]
        byIndex = [:]
        for feed in feeds.values { feed.meter.finish("the ALSA backend stopped") }
        feeds = [:]
        socket = nil
        if state == .ready || state == .connecting { state = .terminated }
    }

    // MARK: - Plugins coming and going

    private func acceptAll() {
        while let (fd, pid) = socket?.accept() {
            let number = nextConnection
            nextConnection += 1
            let connection = PluginConnection(fd: fd, pid: pid, loop: loop)
            connection.onMessage = { [unowned self] message in self.received(message, on: number) }
            connection.onEnd = { [unowned self] _ in self.ended(number) }
            connections[number] = connection
        }
    }

    private func received(_ message: PluginMessage, on number: Int) {
        guard let connection = connections[number] else { return }
        guard var stream = streams[number] else {
            // Nothing is a stream before its HELLO; a second HELLO is ignored.
            if case let .hello(hello) = message { introduced(hello, on: number, pid: connection.pid) }
            return
        }
        switch message {
        case let .format(format):
            stream.format = format
            streams[number] = stream
        case let .state(report):
            guard report.state != .closed else { return ended(number) }
            let wasCorked = stream.corked
            stream.state = report.state
            streams[number] = stream
            guard stream.corked != wasCorked else { return }
            if let feed = feeds[stream.index] { stream.corked ? feed.pause() : feed.resume() }
            if stream.isCapture { onNews(.captureChanged(stream.sourceOutput)) } else { onNews(.streamChanged(stream.sinkInput())) }
        case let .peak(peak):
            feeds[stream.index]?.report(peak, heardUntil: stream.heardUntil(position: peak.position))
        default:
            break
        }
    }

    private func introduced(_ hello: PluginMessage.Hello, on number: Int, pid: pid_t) {
        let stream = PluginStream(index: nextIndex, pid: pid, hello: hello)
        nextIndex += 1
        streams[number] = stream
        byIndex[stream.index] = number
        if stream.isCapture {
            onNews(.captureAdded(stream.sourceOutput))
        } else {
            connections[number]?.send(.meter(intervalMilliseconds: PluginMessage.meterOff))
            onNews(.streamAdded(stream.sinkInput()))
        }
    }

    /// The plugin said CLOSED, or its connection ended (EOF: closed, or the client died).
    private func ended(_ number: Int) {
        connections.removeValue(forKey: number)?.close()
        guard let stream = streams.removeValue(forKey: number) else { return }
        byIndex[stream.index] = nil
        pendingEchoes.remove(stream.index)
        if stream.isCapture {
            onNews(.captureRemoved(stream.index))
        } else {
            onNews(.streamRemoved(stream.index))
        }
        feeds.removeValue(forKey: stream.index)?.meter.finish("sink input \(stream.index) ended")
    }

    // MARK: - What the daemon writes

    /// One SET_GAIN, its gain the factor times the own level's (the plugin's unity, unless the daemon
    /// took another level for the stream's own): linear all the way, as the plugin applies it.
    public func setGain(_ id: StreamID, own: ChannelVolumes, factor: Double) {
        guard let (index, number, _) = playback(id, for: "set the gain of") else { return }
        connections[number]?.send(.setGain(gain: PluginStream.gain(factor, of: own), rampMilliseconds: rampMilliseconds))
        streams[number]?.volume = own.atGain(factor)
        echoLater(index)
    }

    public func rampsByItself(_ id: StreamID) -> Bool {
        guard let index = playbackIndex(of: id), let number = byIndex[index], let stream = streams[number] else {
            return false
        }
        return stream.hello.features.contains(.ramp)
    }

    /// One RAMP for the whole ramp, its gain the factor itself (the stream's own level on ALSA is the
    /// plugin's unity, which nobody else changes).
    public func rampGain(_ id: StreamID, own: ChannelVolumes, to factor: Double, over milliseconds: Double) {
        guard let (index, number, stream) = playback(id, for: "ramp the gain of") else { return }
        guard stream.hello.features.contains(.ramp) else { return setGain(id, own: own, factor: factor) }
        let gain = PluginStream.gain(factor, of: own)
        let duration = UInt32(min(Double(UInt32.max), max(0, milliseconds.rounded(.up))))
        connections[number]?.send(.ramp(gain: gain, rampMilliseconds: duration, floorDecibels: Float(Level.floorDecibels)))
        streams[number]?.volume = own.atGain(factor)
        echoLater(index)
    }

    public func setMute(_ id: StreamID, muted: Bool) {
        guard let (index, number, _) = playback(id, for: "set mute of") else { return }
        connections[number]?.send(.mute(muted, fadeMilliseconds: Self.muteFade))
        streams[number]?.muted = muted
        echoLater(index)
    }

    /// The live playback stream `id` names (its sink-input index, connection number and record); nil, told
    /// as an error, for an ended stream, a capture or a stream of another of the daemon's runs.
    private func playback(_ id: StreamID, for action: String) -> (UInt32, Int, PluginStream)? {
        guard let index = playbackIndex(of: id), let number = byIndex[index], let stream = streams[number],
              !stream.isCapture else {
            onNews(.error("\(action) sink input \(id): no such stream"))
            return nil
        }
        return (index, number, stream)
    }

    /// The plugin does not confirm a command (it cannot refuse a valid one): the echo is the command.
    private func echoLater(_ index: UInt32) {
        guard pendingEchoes.insert(index).inserted else { return }
        later.post { [weak self] in
            guard let self, self.pendingEchoes.remove(index) != nil, let number = self.byIndex[index],
                  let stream = self.streams[number] else { return }
            self.onNews(.streamChanged(stream.sinkInput(levelChange: .ours)))
        }
    }

    /// Nothing is saved on ALSA: a stream's gain lives and dies with it in its plugin.
    public var savedLevels: (any SavedLevels)? { nil }

    // MARK: - Measuring

    public func meter(_ id: StreamID, sink: UInt32, onPeak: @escaping (Float) -> Void) -> (any StreamMeter)? {
        guard let sinkInput = playbackIndex(of: id), let number = byIndex[sinkInput], let stream = streams[number],
              !stream.isCapture, feeds[sinkInput] == nil else { return nil }
        let meter = FedMeter(fedPeaksOf: sinkInput, onClose: { [weak self] in
            guard let self, self.feeds.removeValue(forKey: sinkInput) != nil else { return }
            self.connections[number]?.send(.meter(intervalMilliseconds: PluginMessage.meterOff))
        }, onPeak: onPeak)
        let feed = PeakFeed(meter: meter, loop: loop)
        if stream.corked { feed.pause() }
        feeds[sinkInput] = feed
        connections[number]?.send(.meter(intervalMilliseconds: PeakFeed.interval))
        return meter
    }
}
