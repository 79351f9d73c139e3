/// What the daemon writes to a new stream the server started at one of our saved levels or mutes
/// (``StartOrigin``), once the engine has decided about it: the levels stage's rule, shared by the
/// daemon and the rehearsal of fixtures and properties.
///
/// A stream the policy leaves untouched (factor 1, no ramp running) is put back at its own level; one
/// whose mute was only ours is unmuted, unless the policy mutes it now. Anything the policy does to it
/// is done from its own level by the policy's own writes.
public struct SavedStartCorrection: Equatable, Sendable {
    /// Its own level is written.
    public var writeOwn = false
    /// It is unmuted.
    public var unmute = false

    /// The correction for a stream that started at `volume` with `origin`, whose own level is `own`;
    /// `untouched`: the policy's factor on it is 1 and no ramp runs; `writable`: clients may set its
    /// volume; `policyMuted`: the policy mutes it now.
    public static func of(_ origin: StartOrigin, volume: ChannelVolumes, own: ChannelVolumes, untouched: Bool,
                          writable: Bool, policyMuted: Bool) -> SavedStartCorrection {
        of(levelAway: writable && !volume.matches(own), mutedByUs: origin.mutedByUs, untouched: untouched,
           policyMuted: policyMuted)
    }

    /// The same rule from what the engine is told (``Event/startedAtOurSave(_:levelAway:mutedByUs:)``):
    /// `levelAway`, the stream started away from its own level and can be written.
    public static func of(levelAway: Bool, mutedByUs: Bool, untouched: Bool, policyMuted: Bool) -> SavedStartCorrection {
        SavedStartCorrection(writeOwn: untouched && levelAway, unmute: mutedByUs && !policyMuted)
    }
}
