/// What the daemon has done to one live stream's level and mute, and the rules that move it.
///
/// The one record of a stream's level that the daemon's actuation (``LiveStream`` in the shell) and the
/// levels rehearsal (``RehearsedDaemon``) both keep, so that how a command or its user's change moves it,
/// what is written, and what the journal must keep on record are decided in one place: when the two
/// kept their own copies of these rules, a bug the property run found in the rehearsal's copy lived on in
/// the daemon's (and the other way round).
public struct StreamLevel: Equatable, Sendable {
    /// The stream's own, user-set, per-channel volume: what a factor of 1 means. Ducks scale it;
    /// restoring writes it back exactly.
    public var own: ChannelVolumes
    /// The policy's factor last written to the server.
    public private(set) var factor: Double = 1
    /// The factor the policy asks for now. It differs from ``factor`` while the server cannot take a
    /// write (a stream whose volume pipewire-pulse has not told yet): once it can, this is written, so the
    /// shell carries out what it was told without asking the engine again.
    public private(set) var wanted: Double = 1
    /// The mute fallback has muted it (so its end, a stop and recovery unmute it).
    public private(set) var policyMuted = false
    /// That mute is held until its user acts (its output went away: ``Command/hold(_:)``), so that
    /// recovery after a crash keeps it rather than letting the stream play on the speakers.
    public private(set) var heldForLoss = false
    /// When the policy's unmute of it was sent (µs, the daemon's clock), until the server has answered
    /// it: the journal keeps the policy's mute on record until then (``policyMutedOnRecord(mutedNow:)``).
    public private(set) var unmuteSentAt: UInt64?

    public init(own: ChannelVolumes) {
        self.own = own
    }

    // MARK: - What the journal keeps

    /// The policy's mute as the journal has it: in force, or undone by an unmute the server has not
    /// answered while the stream is heard of unmuted (`mutedNow` false). That unmute is lost if the
    /// stream ends at once, and its key's saved entry keeps our mute; after a kill, only the journal tells
    /// the next run to repair it unmuted (found by the levels property run, with a stream's last writes
    /// lost after a SIGKILL).
    public func policyMutedOnRecord(mutedNow: Bool) -> Bool {
        policyMuted || (unmuteSentAt != nil && !mutedNow)
    }

    /// The policy's mute is undone by an unmute the server has not answered yet.
    public func unmuteInFlight(mutedNow: Bool) -> Bool {
        !policyMuted && policyMutedOnRecord(mutedNow: mutedNow)
    }

    /// Whether the daemon's changes to the stream's level or mute are in force or on their way back, so
    /// that the journal must keep it: a factor written, a factor asked for and not yet written to a
    /// stream that can take it (`writable`), the policy's mute on record, or a ramp still running
    /// (`ramping`). Nothing is written to a stream whose volume the server has not told
    /// (`volumePending`, ``LateVolume``): nothing of it is on record until then.
    public func isChanged(mutedNow: Bool, writable: Bool = true, volumePending: Bool = false,
                          ramping: Bool = false) -> Bool {
        guard !volumePending else { return false }
        return factor != 1 || (wanted != factor && writable) || policyMutedOnRecord(mutedNow: mutedNow) || ramping
    }

    // MARK: - The policy's writes

    /// The policy asks for `factor`: whether it is to be written now (the stream can take a write,
    /// `writable`, and is not at it already, unless `evenIfThere`: a ramp handed whole to a backend that
    /// ramps by itself goes from wherever the backend has it). Once written, it is the factor the stream has.
    public mutating func want(_ factor: Double, writable: Bool, evenIfThere: Bool = false) -> Bool {
        wanted = factor
        guard writable, evenIfThere || factor != self.factor else { return false }
        self.factor = factor
        return true
    }

    /// The volume that carries `factor`: exactly the stream's own at 1.
    public func volume(at factor: Double) -> ChannelVolumes {
        own.atGain(factor)
    }

    /// The mute fallback begins: its fade-out ends in the policy's mute, and an unmute still unanswered
    /// from before is overtaken by it.
    public mutating func policyMutes() {
        policyMuted = true
        unmuteSentAt = nil
    }

    /// The policy holds its mute until the user acts (``Command/hold(_:)``): only a mute of the policy's
    /// can be held.
    public mutating func holdForLoss() {
        guard policyMuted else { return }
        heldForLoss = true
    }

    /// The policy's mute is over (``Command/unmute(_:to:fade:)``), the unmute sent at `now`. Returns
    /// whether the stream had the policy's mute: if so, the mute it is heard of until the unmute's echo is
    /// ours, never its user's.
    @discardableResult
    public mutating func policyUnmutes(at now: UInt64) -> Bool {
        let hadIt = policyMuted
        if hadIt { unmuteSentAt = now }
        policyMuted = false
        heldForLoss = false
        return hadIt
    }

    /// The server has answered the writes sent before `time` (every write so far, if nil): an unmute
    /// among them is no longer on record. Returns whether one was.
    @discardableResult
    public mutating func writesAnswered(sentBefore time: UInt64? = nil) -> Bool {
        guard let sent = unmuteSentAt, time.map({ sent < $0 }) ?? true else { return false }
        unmuteSentAt = nil
        return true
    }

    /// Recovery undid an earlier run's mute of it, the unmute sent at `sent` (µs, the daemon's clock): until
    /// the server has answered, the journal keeps that mute on record, as for the policy's own unmute
    /// (``policyUnmutes(at:)``), with its key's mark. A stream of its key that starts before the unmute is
    /// applied gets the earlier run's mute; after a kill, only that mark tells the next run so (found by the
    /// levels property run, seed 15900847877908403872 on PulseAudio: a start overtook recovery's unmute of a
    /// faded stream at the fade's silence, the daemon was killed as it heard of it, and the run after,
    /// finding recovery's entry of the faded stream as it stood with no mark, took its mute for its user's).
    public mutating func unmutedByRecovery(at sent: UInt64) {
        guard !policyMuted else { return }
        unmuteSentAt = sent
    }

    /// An earlier run held it muted for a lost output, and recovery kept it so: the policy holds it on.
    public mutating func heldByRecovery() {
        policyMuted = true
        heldForLoss = true
    }

    // MARK: - Its user's changes

    /// Its user (or an app) muted or unmuted it: the mute is theirs either way, never the policy's to undo.
    public mutating func theyMuted() {
        policyMuted = false
        heldForLoss = false
        unmuteSentAt = nil
    }

    /// Its mute, told late (``LateVolume``), is its user's: the policy yields its own.
    public mutating func policyYieldsMute() {
        policyMuted = false
        heldForLoss = false
    }

    /// Its user set its level (``Command/yieldVolume(_:)``): that is its own from now on, and the policy
    /// yields to it.
    public mutating func theirLevel(_ volume: ChannelVolumes) {
        own = volume
        factor = 1
        wanted = 1
    }
}
