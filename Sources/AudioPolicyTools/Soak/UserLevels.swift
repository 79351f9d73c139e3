import AudioPolicy
import PulseBackend
import SoundBackend
/// What the user chose, as the soak remembers it: each live stream's own level (the volume its app
/// asked for, or the user's last change) and mute, and for each stream-restore key every level the
/// user (or an app) had for a stream of that key — the only levels a saved entry may hold.
///
/// A saved entry equal to none of them is a level nobody chose: a duck or mute the daemon left saved.
struct UserLevels {
    struct Level: Equatable {
        var volume: ChannelVolumes
        var muted: Bool
        /// Other levels it may rightly be at: the mixer first saw it already ducked or faded, from one
        /// of these (the first checkpoint it passes settles which).
        var alternatives: [ChannelVolumes] = []
        /// Whether it may rightly be muted or not: it started muted, and the user had muted a stream of
        /// its key before (the server restores that), or the daemon muted it at once.
        var eitherMute = false

        /// Whether the server's `volume` and `muted` are this level.
        func accepts(volume: ChannelVolumes, muted: Bool) -> Bool {
            (UserLevels.same(volume, self.volume) || alternatives.contains { UserLevels.same(volume, $0) })
                && (eitherMute || muted == self.muted)
        }
    }

    private(set) var streams: [UInt32: Level] = [:]
    private var keys: [UInt32: String] = [:]
    private var keyLevels: [String: [ChannelVolumes]] = [:]
    private var keyMuted: Set<String> = []
    /// Keys a stream of the soak's has started with.
    private var seenKeys: Set<String> = []
    /// Each stream's level before the user's last change of it.
    private var beforeUser: [UInt32: Level] = [:]

    /// Every key the soak's streams used.
    var knownKeys: Set<String> { Set(keyLevels.keys) }

    /// Takes what was saved before the soak began as chosen (by whoever used the server before).
    mutating func adopt(_ entries: [StreamRestoreEntry]) {
        for entry in entries {
            // Even silence: whatever was saved before the soak is not this run's doing.
            if let volume = entry.volume { keyLevels[entry.name, default: []].append(volume) }
            if entry.muted { keyMuted.insert(entry.name) }
        }
    }

    /// An app asked for `volume` for a stream of `key` (the key the server will give it): a level the
    /// server may save and restore, whether or not the stream lives long enough to be seen.
    mutating func appAsked(_ volume: ChannelVolumes, key: String) {
        remember(volume, for: key)
    }

    /// A stream of the soak's appeared, with stream-restore key `key`, at `level` as the server first
    /// reported it; its app asked for `requested` (nil: the server's choice, as most apps leave it).
    /// Returns why that start is wrong, if it is.
    ///
    /// Its own level is what it started at when that is a level somebody chose: the app's, one the
    /// user had for its key (the server restores those: PulseAudio when the app sets none, WirePlumber
    /// always), or the server's default, 100 %. A start scaled down from such a level is that level
    /// under a duck: the daemon's, already applied when the mixer looked, or one the server saved from
    /// the daemon's duck of another stream of the key (which the daemon must see through). Anything
    /// else is a level nobody chose. A muted start is the user's only if the user muted a stream of
    /// the key before.
    mutating func started(_ index: UInt32, key: String?, level: Level, requested: ChannelVolumes?) -> String? {
        var candidates = key.flatMap { keyLevels[$0] } ?? []
        candidates.append(ChannelVolumes(uniform: ChannelVolumes.norm, channels: level.volume.channels))
        if let requested { candidates.append(requested) }
        candidates = candidates.filter { $0.channels == level.volume.channels }
        var problem: String?
        let own: ChannelVolumes
        var alternatives: [ChannelVolumes] = []
        let firstOfKey = key.map { !seenKeys.contains($0) } ?? false
        if let key { seenKeys.insert(key) }
        let silent = !level.volume.values.contains { $0 > 0 }
        if silent, let last = candidates.last(where: { $0.values.contains { $0 > 0 } }) ?? candidates.last {
            // Faded out before the mixer looked (or started at a saved silence): any level of the key.
            own = last
            alternatives = candidates
        } else if candidates.contains(where: { Self.same($0, level.volume) }) {
            own = level.volume
        } else if case let under = candidates.filter({ Self.isScaledDown(level.volume, from: $0) }), let last = under.last {
            own = last
            alternatives = under.dropLast() + (firstOfKey ? [level.volume] : [])
        } else if firstOfKey, level.volume.values.contains(where: { $0 > 0 }) {
            // The key's first stream: the server restored what it saved before the soak (pipewire-pulse
            // does not read back everything WirePlumber saved), whatever that was.
            own = level.volume
        } else {
            own = requested ?? candidates.first ?? level.volume
            problem = "stream #\(index) started at \(level.volume.values) (\(level.volume)), a level nobody chose for "
                + "\(key ?? "its key") (the last ones: \(candidates.suffix(3).map(\.values)))"
        }
        let eitherMute = level.muted && (firstOfKey || key.map { keyMuted.contains($0) } == true || !alternatives.isEmpty
            || !Self.same(own, level.volume))
        streams[index] = Level(volume: own, muted: false, alternatives: alternatives, eitherMute: eitherMute)
        if let key {
            keys[index] = key
            // The key's first start is at a level the server saved for it before the soak, whatever its own
            // level is taken to be: later streams of the key may start there too (pipewire-pulse does not
            // read back everything WirePlumber saved, so `adopt` may not have had it).
            if firstOfKey, !silent { remember(level.volume, for: key) }
            remember(own, for: key)
        }
        return problem
    }

    /// Whether `volume` is `level` with every channel scaled by one factor below 1 (to the rounding
    /// of raw units), as a duck or a fade makes it.
    static func isScaledDown(_ volume: ChannelVolumes, from level: ChannelVolumes) -> Bool {
        guard volume.channels == level.channels, volume.channels > 0,
              zip(volume.values, level.values).allSatisfy({ $0 <= $1 }) else { return false }
        let ratios = zip(volume.linearValues, level.linearValues).map { $1 > 0 ? $0 / $1 : 0 }
        let factor = ratios.reduce(0, +) / Double(ratios.count)
        guard factor < 1 else { return false }
        let scaled = level.scaled(by: factor)
        return zip(scaled.values, volume.values).allSatisfy { a, b in
            (a > b ? a - b : b - a) <= max(3, b / 100)
        }
    }

    /// A checkpoint found the stream at `volume` and `muted`, which its level accepts: that is its level.
    mutating func settle(_ index: UInt32, volume: ChannelVolumes, muted: Bool) {
        guard var level = streams[index], level.accepts(volume: volume, muted: muted) else { return }
        level.volume = volume
        level.muted = muted
        level.alternatives = []
        level.eitherMute = false
        streams[index] = level
    }

    /// The user set a stream's volume.
    mutating func userSet(_ index: UInt32, volume: ChannelVolumes) {
        beforeUser[index] = streams[index]
        streams[index]?.volume = volume
        streams[index]?.alternatives = []
        if let key = keys[index] { remember(volume, for: key) }
    }

    /// The user muted or unmuted a stream.
    mutating func userMuted(_ index: UInt32, _ muted: Bool) {
        beforeUser[index] = streams[index]
        streams[index]?.muted = muted
        streams[index]?.eitherMute = false
        if muted, let key = keys[index] { keyMuted.insert(key) }
    }

    /// The daemon wrote `stream` a moment after the user's last change of it: whether it wrote from the
    /// level before that change, not knowing it yet, and may keep that level (the known gap of a change
    /// just before a ramp step, docs/tests.md). Then the level before the change is accepted too, until a
    /// checkpoint settles which. A write that follows from the change (a hold the user's act ends, the
    /// new level ducked) is not such a race, and the user's level alone stays right for it.
    mutating func userChangeRaced(_ stream: SinkInput) -> Bool {
        guard var level = streams[stream.index], let before = beforeUser[stream.index] else { return false }
        let fromBefore = [before.volume] + before.alternatives
        let fromNow = [level.volume] + level.alternatives
        let from: ([ChannelVolumes]) -> Bool = { levels in
            levels.contains { Self.same(stream.volume, $0) || Self.isScaledDown(stream.volume, from: $0) }
        }
        // A level only the one before the change explains (so the user's change was to the volume).
        let volumeRaced = stream.theirVolume && from(fromBefore) && !from(fromNow)
        // The user's mute undone: only a restore that began from the level before unmutes so soon.
        let muteRaced = stream.theirMute && level.muted && !before.muted && !stream.muted
        guard volumeRaced || muteRaced else { return false }
        if volumeRaced { level.alternatives += fromBefore }
        if muteRaced { level.eitherMute = true }
        streams[stream.index] = level
        return true
    }

    mutating func ended(_ index: UInt32) {
        streams[index] = nil
        keys[index] = nil
        beforeUser[index] = nil
    }

    /// The server went away: every stream with it (and its indexes will be reused).
    mutating func serverGone() {
        streams = [:]
        keys = [:]
        beforeUser = [:]
    }

    func level(of index: UInt32) -> Level? { streams[index] }

    /// Why `entry` holds a level nobody chose; nil when it is one of the user's (or not one of ours).
    func problem(with entry: StreamRestoreEntry) -> String? {
        guard var levels = keyLevels[entry.name] else { return nil }
        // The server's default for a key it saved nothing for (pipewire-pulse reports such keys at 100 %).
        if let volume = entry.volume { levels.append(ChannelVolumes(uniform: ChannelVolumes.norm, channels: volume.channels)) }
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
        a.matches(b)
    }

    private mutating func remember(_ volume: ChannelVolumes, for key: String) {
        if !(keyLevels[key]?.contains { Self.same($0, volume) } ?? false) {
            keyLevels[key, default: []].append(volume)
        }
    }
}
