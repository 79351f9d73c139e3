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

    public init(above: UInt32, server: UInt32?) {
        self.above = above
        self.server = server
    }
}
