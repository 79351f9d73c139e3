/// What recovery does to one stream an earlier run (or a server that went away) left changed and that is
/// still there: the levels stage's one rule for it, which the daemon carries out and fixtures replay.
///
/// The rule, as the journal tells the stream's past and the server its present:
/// - held muted for an output that went away, and still muted: kept muted (unmuted, it would play on the
///   speakers); the engine holds it on until the user acts — unless someone set its level since, which
///   is the user acting while no daemon ran (as the engine's hold ends on a level change): unmuted, at
///   that level;
/// - muted by the policy, and still muted: unmuted;
/// - at a copy of its own level scaled down by one factor (a duck, a ramp's step, a fade's end): its own
///   level back; at any other level someone set it since, and it is left there;
/// - a player it paused stays paused (never resumed behind the user's back: a call may still be on).
public struct RecoveryStep: Equatable, Sendable {
    /// Kept muted for a lost output: the engine hears it held.
    public var held = false
    /// Unmuted: the policy's mute of it is over.
    public var unmute = false
    /// Its own level, written back over what a run left of its ducks.
    public var restore: ChannelVolumes?
    /// Left at a level someone else set since (nothing written).
    public var leftAlone = false

    public init(held: Bool = false, unmute: Bool = false, restore: ChannelVolumes? = nil, leftAlone: Bool = false) {
        self.held = held
        self.unmute = unmute
        self.restore = restore
        self.leftAlone = leftAlone
    }

    /// The step for `stream` (its journal entry; `heldForLoss` as journaled), now at `volume` and `muted`
    /// (`writable`: it has a volume clients may change).
    public static func of(_ stream: WrittenStream, heldForLoss: Bool, volume: ChannelVolumes, muted: Bool,
                          writable: Bool) -> RecoveryStep {
        var step = RecoveryStep()
        if writable, !volume.matches(stream.own) {
            if stream.isScaledDown(volume) { step.restore = stream.own } else { step.leftAlone = true }
        }
        if stream.policyMuted, muted {
            // A level set since is an act: held on, the stream would stay muted at a level its user chose
            // to hear it at (the soak on CI: the user turned a held stream up while the daemon was down,
            // and the next run kept it muted until a checkpoint found it).
            if heldForLoss, !step.leftAlone { step.held = true } else { step.unmute = true }
        }
        return step
    }
}

extension RecoveryStep {
    /// A stream as the journal names it: its index on its server instance.
    private struct JournaledStream: Hashable {
        let server: UInt32?
        let index: UInt32
    }

    /// The journal's entries as a recovery takes them: the newest of each stream (its index on its server
    /// instance). The file holds the entries a recovery undoes until the server has answered it, and then
    /// the new run's: a stream the new run knows — put back by that recovery, or muted by its user since —
    /// is the new run's to tell (found by the levels property run: a recovery killed before its answer left
    /// the policy's mute on record, and the run after it took the user's later mute for ours).
    public static func newestPerStream<Entry>(_ entries: [Entry], _ written: (Entry) -> WrittenStream) -> [Entry] {
        var newest: [JournaledStream: Int] = [:]
        for (position, entry) in entries.enumerated() {
            let stream = written(entry)
            newest[JournaledStream(server: stream.server, index: stream.index)] = position
        }
        let kept = Set(newest.values)
        return entries.enumerated().filter { kept.contains($0.offset) }.map(\.element)
    }
}
