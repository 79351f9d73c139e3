/// A level a duck settled at, for a stream-restore key: what a server that saves levels may give a
/// stream of the key long after the run that wrote it (``SavedWrites/rememberSettled(_:)``), and the
/// stream's own level under it.
public struct SettledDuck: Codable, Hashable, Sendable {
    /// The stream-restore key (`module-stream-restore.id`).
    public var key: String
    /// The ducked level.
    public var volume: ChannelVolumes
    /// The stream's own level under it.
    public var own: ChannelVolumes

    public init(key: String, volume: ChannelVolumes, own: ChannelVolumes) {
        self.key = key
        self.volume = volume
        self.own = own
    }

    enum CodingKeys: String, CodingKey {
        case key, volume, own
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        key = try container.decode(String.self, forKey: .key)
        volume = ChannelVolumes(values: try container.decode([ChannelVolumes.Raw].self, forKey: .volume))
        own = ChannelVolumes(values: try container.decode([ChannelVolumes.Raw].self, forKey: .own))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(key, forKey: .key)
        try container.encode(volume.values, forKey: .volume)
        try container.encode(own.values, forKey: .own)
    }
}
