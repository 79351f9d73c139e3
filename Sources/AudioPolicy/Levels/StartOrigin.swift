/// Where a new stream's start came from, when it came from the daemon: a level or mute the server saved
/// from one of our writes to another stream of its key (``SavedWrites``), handed to this one.
public struct StartOrigin: Equatable, Sendable {
    /// Its own level: the level under our write, or its start level when only the mute was ours.
    public var own: ChannelVolumes
    /// Whether its mute is ours (our saved mute), not the user's.
    public var mutedByUs: Bool

    public init(own: ChannelVolumes, mutedByUs: Bool) {
        self.own = own
        self.mutedByUs = mutedByUs
    }
}
