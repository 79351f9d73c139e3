import AudioPolicy
import AudioPolicyDaemon
import EventLoop
import PulseBackend
import SoundBackend

/// The real sound server with stopwatches on, for `bench`: the daemon runs on it unchanged and is timed
/// from the outside.
///
/// Each new stream: when the server announced it and described it (``PulseConnection/onStreamTimed``),
/// and when the daemon's handling of it returned — by then its duck requests have left. Each peak of a
/// measured stream: when it arrived, and when the daemon's handling returned, if that wrote a volume.
/// Nothing of this rides through the daemon's own types.
public final class TimedServer: StreamServer {
    private let inner: PulseConnection
    /// Timings are kept only while this is on.
    public var recording = false
    /// New stream announced → described → requests sent.
    public private(set) var reactions: [ReactionTime] = []
    /// A measured stream first heard → its loud peak arrived → the ducks it caused sent.
    public private(set) var audibilityReactions: [ReactionTime] = []
    private var timed: [UInt32: (announced: UInt64, described: UInt64)] = [:]
    private var heard: [UInt32: UInt64] = [:]
    private var volumeWrites = 0
    /// A sink's removal event → the first mute request after it, µs (an output lost: the music muted).
    public private(set) var removalReactions: [UInt64] = []
    private var sinkRemovedAt: UInt64?

    public init(loop: MainLoop) {
        inner = PulseConnection(loop: loop, applicationName: "audio-policyd")
        inner.onStreamTimed = { [unowned self] index, announced, described in
            timed[index] = (announced, described)
        }
    }

    public func clearReactions() {
        reactions = []
    }

    public func clearAudibilityReactions() {
        audibilityReactions = []
    }

    // MARK: - Timed

    /// The news passes through; a new stream's handling, a stream's end and a sink's removal are timed.
    public var onNews: (ServerNews) -> Void {
        get { inner.onNews }
        set {
            inner.onNews = { [unowned self] news in
                switch news {
                case let .streamAdded(input):
                    heard[input.index] = MainLoop.monotonicMicroseconds()
                    newValue(news)
                    guard let times = timed.removeValue(forKey: input.index), recording else { return }
                    reactions.append(ReactionTime(announced: times.announced, described: times.described,
                                                  acted: MainLoop.monotonicMicroseconds()))
                case let .streamRemoved(index):
                    heard[index] = nil
                    timed[index] = nil
                    newValue(news)
                case .sinkRemoved:
                    // Timed from when the removal event entered the process.
                    sinkRemovedAt = inner.lastEventReceivedAt ?? MainLoop.monotonicMicroseconds()
                    newValue(news)
                default:
                    newValue(news)
                }
            }
        }
    }

    public func setMute(_ stream: StreamID, muted: Bool) {
        if muted, recording, let removed = sinkRemovedAt {
            removalReactions.append(MainLoop.monotonicMicroseconds() - removed)
            sinkRemovedAt = nil
        }
        inner.setMute(stream, muted: muted)
    }

    public func clearRemovalReactions() {
        removalReactions = []
        sinkRemovedAt = nil
    }

    public func meter(_ stream: StreamID, sink: UInt32, onPeak: @escaping (Float) -> Void) -> (any StreamMeter)? {
        guard let sinkInput = stream.playbackIndex else { return nil }
        return inner.meter(stream, sink: sink) { [unowned self] peak in
            let peakAt = MainLoop.monotonicMicroseconds()
            let writesBefore = volumeWrites
            onPeak(peak)
            guard recording, volumeWrites != writesBefore, let heardAt = heard[sinkInput] else { return }
            audibilityReactions.append(ReactionTime(announced: heardAt, described: peakAt,
                                                    acted: MainLoop.monotonicMicroseconds()))
        }
    }

    public func setGain(_ stream: StreamID, own: ChannelVolumes, factor: Double) {
        volumeWrites += 1
        inner.setGain(stream, own: own, factor: factor)
    }

    // MARK: - Passed through

    public var state: PulseConnection.State { inner.state }
    public var isReady: Bool { inner.isReady }
    public var serverDescription: String? { inner.serverDescription }
    public var instance: ServerInstance { inner.instance }
    public func connect() { inner.connect() }
    public func drain(_ completion: @escaping () -> Void) { inner.drain(completion) }
    public var savedLevels: (any SavedLevels)? { inner.savedLevels }
}
