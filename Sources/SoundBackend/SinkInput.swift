import AudioPolicy

/// A snapshot of one playback stream (a PulseAudio sink input), copied out
/// of libpulse's `pa_sink_input_info` while its callback ran.
///
/// ``properties`` merges the stream's property list with its client's:
/// client keys fill in only where the stream lacks them. pipewire-pulse, for
/// example, puts `pipewire.access.portal.app_id` and the `pipewire.sec.*`
/// keys on the client alone.
public struct SinkInput: Equatable, Sendable {
    /// Who changed volume or mute, relative to the previous snapshot delivered for the same stream.
    public typealias LevelChange = AudioPolicy.LevelChange

    // MARK: - What the server says

    /// The sink input's index, unique for the server's lifetime.
    public var index: UInt32
    /// The owning client's index; `nil` for streams that modules created.
    public var clientIndex: UInt32?
    /// The index of the sink it plays to.
    public var sinkIndex: UInt32
    /// The stream's name (`media.name`), often a title or a file name.
    public var name: String
    /// The stream's properties merged with its client's.
    public var properties: [String: String]
    /// Current per-channel volume, with the stream's channel map.
    public var volume: ChannelVolumes
    /// Whether the stream is muted.
    public var muted: Bool
    /// Whether the stream is paused (corked) by its own application.
    public var corked: Bool
    /// Whether the stream has a volume at all (passthrough streams do not).
    public var hasVolume: Bool
    /// Whether clients may change that volume.
    public var volumeWritable: Bool

    // MARK: - Delivery facts

    /// pipewire-pulse announced the stream before its volume (every channel at 0); its restored volume
    /// follows in a change, or the wait ends after ``PulseConnection/volumeHoldTime``. Nothing may be
    /// computed from, or written to, the volume until then.
    public var volumePending = false
    /// When the server's announcement of the stream reached the daemon (µs, monotonic; nil for a stream
    /// present at the connection): PulseAudio applies a write of a saved entry before it answers it, so a
    /// stream announced after that answer started from the entry as written (``ServerSaving/appliesEntriesBeforeAnswering``).
    public var announcedAt: UInt64?
    /// On `onStreamChanged` deliveries: who changed volume or mute. `.none`
    /// on every other delivery.
    public var levelChange: LevelChange

    /// On `.theirs` deliveries: whether the volume, and whether the mute, is what someone else changed
    /// (it differs from the previous delivery and is no echo of ours). The daemon's own copy of a stream
    /// can differ from the previous delivery (recovery writes the user's level into it before the
    /// server's echo), so what changed is told here, not worked out from that copy (found by
    /// `audio-policyd soak`: the user's volume change on a stream recovery had unmuted and the policy
    /// muted again read as the user muting it, and the mute was never undone).
    public var theirVolume = false
    public var theirMute = false
    /// On `.theirs` deliveries with ``theirVolume``: a volume write of ours was still on its way when this
    /// snapshot was fetched, and may land over that change; the daemon writes the new level once more,
    /// after it (``OwnWrites/volumeInFlight(fetched:)``).
    public var theirVolumeOvertaken = false

    /// Whether this change is only the server echoing our own write.
    public var isEcho: Bool { levelChange == .ours }

    // MARK: - Well-known properties

    /// `media.role` (`music`, `event`, `phone`… or PipeWire's `Music`, `Notification`…).
    public var role: String? { properties["media.role"] }
    /// `application.name`.
    public var applicationName: String? { properties["application.name"] }
    /// `application.process.binary` (`pacat` for paplay, `aplay`, `firefox-esr`…).
    public var processBinary: String? { properties["application.process.binary"] }
    /// The pid of the process that plays it, as its client says.
    public var processID: Int? { properties["application.process.id"].flatMap { Int($0) } }
    /// The stream-restore database key (`module-stream-restore.id`), e.g.
    /// `sink-input-by-media-role:music`.
    public var restoreID: String? { properties["module-stream-restore.id"] }

    public init(
        index: UInt32, clientIndex: UInt32?, sinkIndex: UInt32, name: String,
        properties: [String: String], volume: ChannelVolumes, muted: Bool, corked: Bool,
        hasVolume: Bool = true, volumeWritable: Bool = true,
        levelChange: LevelChange = .none
    ) {
        self.index = index
        self.clientIndex = clientIndex
        self.sinkIndex = sinkIndex
        self.name = name
        self.properties = properties
        self.volume = volume
        self.muted = muted
        self.corked = corked
        self.hasVolume = hasVolume
        self.volumeWritable = volumeWritable
        self.levelChange = levelChange
    }

    /// Whether `other` describes the same server state, ignoring delivery
    /// facts and volume differences of one raw unit.
    public func sameState(as other: SinkInput) -> Bool {
        index == other.index && clientIndex == other.clientIndex && sinkIndex == other.sinkIndex
            && name == other.name && properties == other.properties && volume.matches(other.volume)
            && volume.channelMap == other.volume.channelMap && muted == other.muted
            && corked == other.corked && hasVolume == other.hasVolume
            && volumeWritable == other.volumeWritable && volumePending == other.volumePending
    }


}
