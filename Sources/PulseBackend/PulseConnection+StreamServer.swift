import SoundBackend

/// The pulse backend is a ``StreamServer``, and its server saves levels (module-stream-restore, or
/// WirePlumber's restore-stream through pipewire-pulse).
extension PulseConnection: StreamServer {
    public var savedLevels: (any SavedLevels)? { self }
}

extension PulseConnection: SavedLevels {
    public var savesMuteWithEveryChange: Bool { tracker.serverIsPipeWire }
    public var serverCookie: UInt32? { cookie }
}
