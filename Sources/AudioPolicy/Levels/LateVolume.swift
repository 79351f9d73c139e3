/// Whose a new stream's level and mute are when a server tells them late: the levels stage's rule, shared
/// by the daemon and the rehearsal of fixtures and properties.
///
/// pipewire-pulse (0.3.65) announces a new stream with every channel at 0 and tells its restored volume
/// and mute a few milliseconds later. Nothing is written to it meanwhile — a duck computed from the
/// placeholder 0 would silence it, and a mute of ours sent then could not be told, when the mute
/// arrives, from the one the server restored — but the policy may already have ducked it or faded it
/// out. When the volume arrives it is the stream's own level, or the level under it when the server
/// restored one of our saved ducks (``StartOrigin``); a mute it arrives with is its user's unless it is
/// our saved one, and the policy's mute yields to it. What the policy asked for meanwhile is the
/// engine's to restate (``Event/levelTold(_:muted:)``).
public struct LateVolume: Equatable, Sendable {
    /// The stream's own level from now on.
    public var own: ChannelVolumes
    /// Whether the mute it arrived with is our saved mute, not its user's.
    public var mutedByUs: Bool
    /// Whether it arrived muted by its user (or app): the engine must hear of it as the user's mute.
    public var usersMute: Bool
    /// Whether the server started it at a level or mute of ours: once the factor is written, it is put
    /// right as a start at one is (``SavedStartCorrection``).
    public var adopted: Bool
    /// Whether the policy's mute, asked for meanwhile, yields to its user's mute (never to be undone by us).
    public var policyYields: Bool

    /// The stream's volume arrived at `volume`, `muted`; `origin`: the levels stage's answer about a start
    /// at them (``LevelOwnership/origin(of:key:volume:muted:volumeKnown:now:)``); `policyMuted`: the policy
    /// mutes it.
    public static func arrived(at volume: ChannelVolumes, muted: Bool, origin: StartOrigin?,
                               policyMuted: Bool) -> LateVolume {
        let start = StartOrigin(own: origin?.own ?? volume, mutedByUs: muted && (origin?.mutedByUs ?? false))
        let usersMute = StartOrigin.usersMute(startedMuted: muted, mutedByUs: start.mutedByUs, held: false)
        return LateVolume(own: start.own, mutedByUs: start.mutedByUs, usersMute: usersMute,
                          adopted: start.needsCorrection(startedAt: volume), policyYields: policyMuted && usersMute)
    }
}
