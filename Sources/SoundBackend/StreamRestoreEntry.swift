import AudioPolicy

/// One saved entry of the server's stream-restore database: the volume,
/// mute and device it gives the next stream with the same key.
///
/// Both PulseAudio's module-stream-restore and pipewire-pulse (which keeps
/// the entries in WirePlumber's restore-stream state) save a stream's volume
/// when it changes and apply it to the next stream with the same key. A duck
/// left behind is therefore saved too: write the entry back when a stream
/// whose volume we changed goes away.
public struct StreamRestoreEntry: Equatable, Sendable {
    /// The key, as in a stream's `module-stream-restore.id` property, e.g.
    /// `sink-input-by-media-role:music` or
    /// `sink-input-by-application-name:ALSA plug-in [aplay]`.
    public var name: String
    /// The saved volume and its channel map; `nil` when the entry saves none.
    public var volume: ChannelVolumes?
    /// The saved mute state (`false` when the entry saves none).
    public var muted: Bool
    /// The saved sink name, if the entry saves one.
    public var device: String?

    public init(name: String, volume: ChannelVolumes?, muted: Bool, device: String?) {
        self.name = name
        self.volume = volume
        self.muted = muted
        self.device = device
    }
}
