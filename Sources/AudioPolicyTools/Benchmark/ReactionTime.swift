/// One new stream's way through the daemon, in monotonic microseconds: the server announced it, the
/// server's answer describing it (its properties) arrived, the daemon had sent what the policy asked.
public struct ReactionTime: Sendable, Equatable {
    public var announced: UInt64
    public var described: UInt64
    public var acted: UInt64

    public init(announced: UInt64, described: UInt64, acted: UInt64) {
        self.announced = announced
        self.described = described
        self.acted = acted
    }

    /// Announcement to requests sent: what the user waits for.
    public var total: UInt64 { acted &- announced }
    /// The server answering our request for the stream's description (its round trip and its wait).
    public var server: UInt64 { described &- announced }
    /// The daemon's own part: description in hand to requests sent.
    public var daemon: UInt64 { acted &- described }
}
