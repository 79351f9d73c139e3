/// Where a key's saved mute is the policy's: above which sink-input index, on which server instance.
///
/// The journal keeps it beside a stream the policy muted (its `savedMuteAbove` and `savedMuteServer`),
/// so that the next run can tell a stream that started with the dead run's saved mute from one its
/// user muted. Indexes mean something only on the instance that gave them, so the two travel together.
public struct SavedMuteMark: Equatable, Sendable {
    /// The highest sink-input index seen: a stream of the key above it started later.
    public var above: UInt32
    /// The server instance's cookie (``SavedLevels/serverCookie``); nil when the server did not tell.
    public var server: UInt32?
    /// The mark of a stream whose unmute by the policy the server had not answered: the key's saved mute
    /// is ours only if that unmute was lost, which the next run takes it was when the stream is gone and
    /// its key's entry is saved muted (``LevelOwnership/recovered(_:gone:savedMuted:now:)``).
    public var ifUnmuteLost: Bool
    /// For ``ifUnmuteLost``: the stream whose unmute it waits on, when it is another stream of the key
    /// (a start at our mute, put right); nil: the stream the mark is kept beside.
    public var unmuteOf: UInt32?
    /// A repair of the key's entry was sent over our mute (and, where recovery sets it, applied since: the
    /// server reads the key back unmuted): a stream of the key above the mark has our mute only if it
    /// started at a level of ours (a fade-out's silence, a duck), which came with the entry the repair
    /// replaced; at any other level it started after the repair, and its mute is its app's or user's.
    public var atOurLevelsOnly = false

    /// Whether it counts on another server instance than `instance` (the server restarted since): there
    /// its index means nothing. Unknown on either side, it does not.
    public func isOfAnotherInstance(than instance: UInt32?) -> Bool {
        guard let server, let instance else { return false }
        return server != instance
    }

    public init(above: UInt32, server: UInt32?, ifUnmuteLost: Bool = false, unmuteOf: UInt32? = nil,
                atOurLevelsOnly: Bool = false) {
        self.above = above
        self.server = server
        self.ifUnmuteLost = ifUnmuteLost
        self.unmuteOf = unmuteOf
        self.atOurLevelsOnly = atOurLevelsOnly
    }
}
