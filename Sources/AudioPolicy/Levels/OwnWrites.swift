/// The volumes and mutes we recently sent for one sink input, so that the
/// server's echo of them can be told from someone else's change.
///
/// The server answers every `set_sink_input_volume`/`set_sink_input_mute`
/// with a CHANGE event; the snapshot fetched for it may already show a later
/// write (events coalesce) and comes back up to one raw unit off
/// (pipewire-pulse converts volumes to floats). So a snapshot is our echo
/// when its volume matches any write still pending (±1 raw unit per
/// channel); that write and all earlier ones are then settled.
///
/// A snapshot fetched after the server answered a write shows that write
/// (PulseAudio applies it before answering; pipewire-pulse 0.3.65 answers
/// after its own copy of the stream has it: 0 of 200 such fetches showed the
/// mute before, against 101 of 200 fetched before the answer), or whatever
/// someone else set after it. Such a write can no longer echo, whatever the
/// snapshot shows: it is settled, and only it or a later write of ours can
/// explain the value. Without this a mute and its undoing, answered and shown
/// as no change at all, stayed pending, and a user's mute a moment later was
/// taken for the echo of the first (the PipeWire churn's seed 20261123 on
/// CI: music the user muted during a headset's profile switch, unmuted by
/// the daemon after the call that came next).
///
/// Writes older than ``window`` are forgotten: an echo arrives within
/// milliseconds.
public struct OwnWrites: Sendable {
    /// How long a write may wait for its echo.
    public static let window: UInt64 = 2_000_000
    /// At most this many writes of each kind are remembered (a 500 ms ramp
    /// at 50 Hz sends 25).
    public static let capacity = 64

    /// One write: its value, when it was sent, its place in the connection's order of requests and
    /// answers, and that of its answer once it came.
    private struct Write<Value: Sendable>: Sendable {
        var value: Value
        var at: UInt64
        var order: UInt64
        var answered: UInt64?
    }

    private var volumes: [Write<ChannelVolumes>] = []
    private var mutes: [Write<Bool>] = []

    public init() {}

    public var isEmpty: Bool { volumes.isEmpty && mutes.isEmpty }

    /// Notes a volume sent at `now`, as the connection's request number `order` (0 when the caller
    /// does not keep an order: it is then never settled by an answer).
    public mutating func recordVolume(_ volume: ChannelVolumes, at now: UInt64, order: UInt64 = 0) {
        volumes.append(Write(value: volume, at: now, order: order))
        if volumes.count > Self.capacity { volumes.removeFirst(volumes.count - Self.capacity) }
    }

    /// Notes a mute or unmute sent at `now`, like ``recordVolume(_:at:order:)``.
    public mutating func recordMute(_ muted: Bool, at now: UInt64, order: UInt64 = 0) {
        mutes.append(Write(value: muted, at: now, order: order))
        if mutes.count > Self.capacity { mutes.removeFirst(mutes.count - Self.capacity) }
    }

    /// The server answered the write numbered `order`; `answer` is the answer's place in the same
    /// order as requests (a fetch numbered above it shows the write).
    public mutating func answered(_ order: UInt64, at answer: UInt64) {
        if let index = volumes.firstIndex(where: { $0.order == order }) { volumes[index].answered = answer }
        if let index = mutes.firstIndex(where: { $0.order == order }) { mutes[index].answered = answer }
    }

    /// Who changed volume or mute between `previous` and `current`, settling the writes that `current`
    /// echoes: field by field, whether the volume, and whether the mute, changed at someone else's hand
    /// (changed since `previous`, and no echo of ours); `.theirs` if either change is not an echo.
    /// `fetched` is the place of the request that fetched `current` in the connection's order: the
    /// writes answered before it are settled, and of them only the last can explain `current`.
    public mutating func classify(previous: (volume: ChannelVolumes, muted: Bool),
                                  current: (volume: ChannelVolumes, muted: Bool), now: UInt64,
                                  fetched: UInt64 = 0)
        -> (change: LevelChange, theirVolume: Bool, theirMute: Bool) {
        forget(before: now > Self.window ? now - Self.window : 0)
        let volumeChanged = !current.volume.matches(previous.volume)
        let muteChanged = current.muted != previous.muted
        let theirVolume = volumeChanged && !Self.explain(&volumes, fetched: fetched) { $0.matches(current.volume) }
        let theirMute = muteChanged && !Self.explain(&mutes, fetched: fetched) { $0 == current.muted }
        if !volumeChanged { Self.settleAnswered(&volumes, fetched: fetched) }
        if !muteChanged { Self.settleAnswered(&mutes, fetched: fetched) }
        guard volumeChanged || muteChanged else { return (.none, false, false) }
        return (theirVolume || theirMute ? .theirs : .ours, theirVolume, theirMute)
    }

    /// Whether a volume write of ours is left that the server had not answered when the snapshot numbered
    /// `fetched` was fetched: it may land after what that snapshot shows. pipewire-pulse shows a write in
    /// its snapshots only once it has answered it, so a user's change seen there can still be overwritten by
    /// a ramp step the daemon sent before it saw the change (the 120 s churn on PipeWire: a music stream's
    /// fade-in step landed over its user's level, and the stream stayed at the step).
    public func volumeInFlight(fetched: UInt64) -> Bool {
        volumes.contains { $0.order != 0 && !Self.isAnswered($0, before: fetched) }
    }

    /// Settles the writes a snapshot fetched at `fetched` answers for, without a change to classify: a
    /// snapshot the same as the last one still shows every write answered before it.
    public mutating func settle(fetched: UInt64) {
        Self.settleAnswered(&volumes, fetched: fetched)
        Self.settleAnswered(&mutes, fetched: fetched)
    }

    /// Whether one of `writes` explains a changed value (`matches`): the last answered before the fetch
    /// or any later one sent before it. Settles the explaining write and all before it, and every write
    /// answered before the fetch either way. A write sent after the fetch was asked for cannot show in
    /// it (the server takes a connection's requests in order): the 120 s churn on a used PulseAudio
    /// (seed 7345) saw a user's mute, fetched before the daemon muted the stream for a headset that went
    /// away, taken for the echo of that mute, and the stream unmuted when its user next set its volume.
    private static func explain<Value>(_ writes: inout [Write<Value>], fetched: UInt64,
                                       matches: (Value) -> Bool) -> Bool {
        let shown = writes.lastIndex { isAnswered($0, before: fetched) }
        let from = shown ?? 0
        let hit = writes[from...].lastIndex { isSent($0, before: fetched) && matches($0.value) }
        if let hit {
            writes.removeFirst(hit + 1)
        } else {
            settleAnswered(&writes, fetched: fetched)
        }
        return hit != nil
    }

    private static func settleAnswered<Value>(_ writes: inout [Write<Value>], fetched: UInt64) {
        if let shown = writes.lastIndex(where: { isAnswered($0, before: fetched) }) {
            writes.removeFirst(shown + 1)
        }
    }

    /// Whether `write` was sent before the fetch numbered `fetched` was asked for (unknown orders count as sent).
    private static func isSent<Value>(_ write: Write<Value>, before fetched: UInt64) -> Bool {
        write.order == 0 || fetched == 0 || write.order < fetched
    }

    private static func isAnswered<Value>(_ write: Write<Value>, before fetched: UInt64) -> Bool {
        guard let answered = write.answered else { return false }
        return answered < fetched
    }

    private mutating func forget(before cutoff: UInt64) {
        volumes.removeAll { $0.at < cutoff }
        mutes.removeAll { $0.at < cutoff }
    }
}
