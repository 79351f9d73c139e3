/// The volumes and mutes we recently sent for one sink input, so that the
/// server's echo of them can be told from someone else's change.
///
/// The server answers every `set_sink_input_volume`/`set_sink_input_mute`
/// with a CHANGE event; the snapshot fetched for it may already show a later
/// write (events coalesce) and comes back up to one raw unit off
/// (pipewire-pulse converts volumes to floats). So a snapshot is our echo
/// when its volume matches any write still pending (±1 raw unit per
/// channel); that write and all earlier ones are then settled. Writes older
/// than ``window`` are forgotten: an echo arrives within milliseconds.
public struct OwnWrites: Sendable {
    /// How long a write may wait for its echo.
    public static let window: UInt64 = 2_000_000
    /// At most this many writes of each kind are remembered (a 500 ms ramp
    /// at 50 Hz sends 25).
    public static let capacity = 64

    private var volumes: [(value: ChannelVolumes, at: UInt64)] = []
    private var mutes: [(value: Bool, at: UInt64)] = []

    public init() {}

    public var isEmpty: Bool { volumes.isEmpty && mutes.isEmpty }

    public mutating func recordVolume(_ volume: ChannelVolumes, at now: UInt64) {
        volumes.append((volume, now))
        if volumes.count > Self.capacity { volumes.removeFirst(volumes.count - Self.capacity) }
    }

    public mutating func recordMute(_ muted: Bool, at now: UInt64) {
        mutes.append((muted, now))
        if mutes.count > Self.capacity { mutes.removeFirst(mutes.count - Self.capacity) }
    }

    /// Who changed volume or mute between `previous` and `current`, settling the writes that `current`
    /// echoes: field by field, whether the volume, and whether the mute, changed at someone else's hand
    /// (changed since `previous`, and no echo of ours); `.theirs` if either change is not an echo.
    public mutating func classify(previous: (volume: ChannelVolumes, muted: Bool),
                                  current: (volume: ChannelVolumes, muted: Bool), now: UInt64)
        -> (change: LevelChange, theirVolume: Bool, theirMute: Bool) {
        forget(before: now > Self.window ? now - Self.window : 0)
        let volumeChanged = !current.volume.matches(previous.volume)
        let muteChanged = current.muted != previous.muted
        guard volumeChanged || muteChanged else { return (.none, false, false) }
        var theirVolume = false, theirMute = false

        var ours = true
        if volumeChanged {
            if let hit = volumes.lastIndex(where: { $0.value.matches(current.volume) }) {
                volumes.removeFirst(hit + 1)
            } else {
                ours = false
                theirVolume = true
            }
        }
        if muteChanged {
            if let hit = mutes.lastIndex(where: { $0.value == current.muted }) {
                mutes.removeFirst(hit + 1)
            } else {
                ours = false
                theirMute = true
            }
        }
        return (ours ? .ours : .theirs, theirVolume, theirMute)
    }

    private mutating func forget(before cutoff: UInt64) {
        volumes.removeAll { $0.at < cutoff }
        mutes.removeAll { $0.at < cutoff }
    }
}
