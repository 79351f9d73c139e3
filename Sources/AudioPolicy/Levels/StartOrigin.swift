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

    /// Whether a stream that started at `volume` with this origin needs putting right once the engine has
    /// decided about it (``SavedStartCorrection``): its mute is ours, or its own level is not the one it
    /// started at.
    public func needsCorrection(startedAt volume: ChannelVolumes) -> Bool {
        mutedByUs || own != volume
    }

    /// Whether a stream that started muted (`startedMuted`) has its user's (or app's) mute: the engine
    /// must know before it decides, or its mute fallback would take that mute over and undo it. Not when
    /// the mute is our saved one (`mutedByUs`, ``SavedWrites/origin(of:muted:key:index:)``), nor when an
    /// earlier run held the stream muted for a lost output (`held`: the engine holds it on until the user
    /// acts). The daemon asks it when a stream starts and when pipewire-pulse tells a start's mute late,
    /// the rehearsal when a stream starts.
    public static func usersMute(startedMuted: Bool, mutedByUs: Bool, held: Bool) -> Bool {
        startedMuted && !mutedByUs && !held
    }
}
