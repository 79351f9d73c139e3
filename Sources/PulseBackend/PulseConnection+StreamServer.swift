import AudioPolicy
import SoundBackend

/// The pulse backend is a ``StreamServer``, and its server saves levels (module-stream-restore, or
/// WirePlumber's restore-stream through pipewire-pulse).
extension PulseConnection: StreamServer {
    public var savedLevels: (any SavedLevels)? { self }
    /// The server's cookie: random each time PulseAudio or pipewire-pulse starts (0 if it told none).
    public var instance: ServerInstance { ServerInstance(backend: .pulse, number: cookie ?? 0) }

    /// A gain as the server takes it: the own level's cubic volume scaled by the factor
    /// (`pa_sw_volume_multiply`), and the own level itself at 1.
    public func setGain(index: UInt32, own: ChannelVolumes, factor: Double) {
        setVolume(index: index, volumes: own.atGain(factor))
    }
}

extension PulseConnection: SavedLevels {
    public var savedAtStart: [StreamRestoreEntry]? { tracker.savedAtStart }
    public var savesMuteWithEveryChange: Bool { tracker.serverIsPipeWire }
    public var serverCookie: UInt32? { cookie }
}
