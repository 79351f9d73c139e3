/// What the user chose, as the soak remembers it: each live stream's own level (the volume its app
/// asked for, or the user's last change) and mute, and for each stream-restore key every level the
/// user (or an app) had for a stream of that key — the only levels a saved entry may hold.
///
/// A saved entry equal to none of them is a level nobody chose: a duck or mute the daemon left saved.
struct UserLevels {
    struct Level: Equatable {
        var volume: ChannelVolumes
        var muted: Bool
    }

    private(set) var streams: [UInt32: Level] = [:]
    private var keys: [UInt32: String] = [:]
    private var keyLevels: [String: [ChannelVolumes]] = [:]
    private var keyMuted: Set<String> = []

    /// Every key the soak's streams used.
    var knownKeys: Set<String> { Set(keyLevels.keys) }

    /// Takes what was saved before the soak began as chosen (by whoever used the server before).
    mutating func adopt(_ entries: [StreamRestoreEntry]) {
        for entry in entries {
            if let volume = entry.volume { keyLevels[entry.name, default: []].append(volume) }
            if entry.muted { keyMuted.insert(entry.name) }
        }
    }

    /// A stream of the soak's appeared at `volume`, unmuted, with stream-restore key `key`.
    mutating func started(_ index: UInt32, key: String?, volume: ChannelVolumes) {
        streams[index] = Level(volume: volume, muted: false)
        if let key {
            keys[index] = key
            remember(volume, for: key)
        }
    }

    /// The user set a stream's volume.
    mutating func userSet(_ index: UInt32, volume: ChannelVolumes) {
        streams[index]?.volume = volume
        if let key = keys[index] { remember(volume, for: key) }
    }

    /// The user muted or unmuted a stream.
    mutating func userMuted(_ index: UInt32, _ muted: Bool) {
        streams[index]?.muted = muted
        if muted, let key = keys[index] { keyMuted.insert(key) }
    }

    mutating func ended(_ index: UInt32) {
        streams[index] = nil
        keys[index] = nil
    }

    /// The server went away: every stream with it (and its indexes will be reused).
    mutating func serverGone() {
        streams = [:]
        keys = [:]
    }

    func level(of index: UInt32) -> Level? { streams[index] }

    /// Why `entry` holds a level nobody chose; nil when it is one of the user's (or not one of ours).
    func problem(with entry: StreamRestoreEntry) -> String? {
        guard let levels = keyLevels[entry.name] else { return nil }
        if entry.muted, !keyMuted.contains(entry.name) {
            return "saved entry \(entry.name) is muted; the user never muted a stream of it"
        }
        if let volume = entry.volume, !levels.contains(where: { Self.same(volume, $0) }) {
            return "saved entry \(entry.name) holds \(volume.values) (\(volume)), a level no stream of it had from "
                + "the user or its app (the last ones: \(levels.suffix(3).map(\.values)))"
        }
        return nil
    }

    /// Whether two volumes are the same level: every channel to one raw unit (pipewire-pulse converts
    /// through floats).
    static func same(_ a: ChannelVolumes, _ b: ChannelVolumes) -> Bool {
        a.matches(b, tolerance: 1)
    }

    private mutating func remember(_ volume: ChannelVolumes, for key: String) {
        if !(keyLevels[key]?.contains { Self.same($0, volume) } ?? false) {
            keyLevels[key, default: []].append(volume)
        }
    }
}
