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
    public func setGain(_ stream: StreamID, own: ChannelVolumes, factor: Double) {
        guard let index = sinkInput(stream, for: "set the volume of") else { return }
        setVolume(index: index, volumes: own.atGain(factor))
    }

    public func setMute(_ stream: StreamID, muted: Bool) {
        guard let index = sinkInput(stream, for: "set the mute of") else { return }
        setMute(index: index, muted: muted)
    }

    public func meter(_ stream: StreamID, sink: UInt32, onPeak: @escaping (Float) -> Void) -> (any StreamMeter)? {
        guard let index = sinkInput(stream, for: "measure") else { return nil }
        return peakMeter(sinkInput: index, sink: sink, onPeak: onPeak)
    }

    /// The sink input `stream` names on the server instance this connection reaches; nil, told as an
    /// error, for a stream of an instance that has gone: its index may name another app's stream now.
    private func sinkInput(_ stream: StreamID, for action: String) -> UInt32? {
        if let index = playbackIndex(of: stream) { return index }
        onNews(.error("\(action) stream \(stream) of \(stream.server.map(String.init(describing:)) ?? "no server"): "
                      + "not a sink input of this server instance (\(instance))"))
        return nil
    }
}

extension PulseConnection: SavedLevels {
    public var savedAtStart: [StreamRestoreEntry]? { tracker.savedAtStart }
    public var savesMuteWithEveryChange: Bool { tracker.serverIsPipeWire }
    public var serverCookie: UInt32? { cookie }
}
