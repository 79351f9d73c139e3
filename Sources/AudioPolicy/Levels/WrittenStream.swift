/// A stream the daemon changed and had not put back, as a journal tells it: what the server may have
/// saved of those changes for the stream's key, and what to write back as that key's saved entry.
///
/// The saved-level bookkeeping (``SavedLevelsBook``) takes it in this form rather than as the daemon's
/// journal entry: the backend knows nothing of players or of how the journal is written.
public struct WrittenStream: Equatable, Sendable {
    /// The sink input's index.
    public var index: UInt32
    /// Its saved entry's key (`module-stream-restore.id`), if it has one.
    public var key: String?
    /// The user's own per-channel level (a factor of 1); empty while the server had not told it.
    public var own: ChannelVolumes
    /// Whether its user (or app) had muted it.
    public var muted: Bool
    /// Whether the policy's mute fallback muted it.
    public var policyMuted: Bool
    /// Every factor strictly between 0 and 1 that run ducked a stream to: the levels its ramps settled at.
    public var duckLevels: [Double]
    /// Where its key's saved mute was the policy's, if it was.
    public var savedMute: SavedMuteMark?
    /// The server instance (its cookie, ``SavedLevels/serverCookie``) the stream played on; nil when the
    /// server did not tell (ALSA), and in older journals.
    public var server: UInt32?
    /// For a stream the policy muted: its key's saved mute as its users have it (the mute, with the
    /// policy's taken off, of the stream whose mute the server saved last for the key:
    /// ``LevelOwnership/written(_:key:own:usersMute:policyMutedOnRecord:unmuteInFlight:duckLevels:)``). Its key's entry is repaired with it once the
    /// stream is gone. Nil when the daemon heard of no such save.
    public var keyUsersMute: Bool?
    /// The server saves the stream's mute with each change of its level (PulseAudio: once a client set
    /// its mute, or the server restored one; ``LevelOwnership/written(_:key:own:usersMute:policyMutedOnRecord:unmuteInFlight:duckLevels:)``), so recovery's write of its
    /// level saves its mute as its key's. False in older journals.
    public var muteSaved: Bool
    /// The policy's factor on it was 0 when written down: a fade-out had reached silence, and the server
    /// may have saved that silence for the stream's key even once the policy's mute of it was over (its
    /// user unmuted it as the run died). A start at silence of the key then has this stream's own level
    /// under it, not that of another of the key's streams, of which silence is as much a scaled copy.
    /// False in older journals.
    public var silenced: Bool

    public init(index: UInt32, key: String?, own: ChannelVolumes, muted: Bool, policyMuted: Bool,
                duckLevels: [Double], savedMute: SavedMuteMark?, server: UInt32? = nil, keyUsersMute: Bool? = nil,
                muteSaved: Bool = false, silenced: Bool = false) {
        self.index = index
        self.key = key
        self.own = own
        self.muted = muted
        self.policyMuted = policyMuted
        self.duckLevels = duckLevels
        self.savedMute = savedMute
        self.server = server
        self.keyUsersMute = keyUsersMute
        self.muteSaved = muteSaved
        self.silenced = silenced
    }

    /// Whether the stream may still play on server instance `instance`: a restarted server starts its
    /// indexes again, and a stream of the same key (even of the same process: a browser reconnects) can
    /// get the index this one had; it is another stream, never to be unmuted or set to this one's level
    /// (found by the levels property run: recovery unmuted a stream that started with its user's mute on
    /// a server restarted while no daemon ran, and saved that unmute as its key's). Unknown on either
    /// side, only the index and what names the stream's owner tell.
    public func mayPlay(on instance: UInt32?) -> Bool {
        guard let server, let instance else { return true }
        return server == instance
    }

    /// The mute to save for the stream's key: the user's, never the policy's. For a stream the policy
    /// muted that is its key's saved mute as its users have it (``keyUsersMute``), not the stream's own
    /// (unmuted before the policy's mute): a user who muted another stream of the key since muted the key.
    public var savedEntryMute: Bool { policyMuted ? keyUsersMute ?? false : muted }

    /// Whether `current` is a copy of the user's own level scaled down by one common factor: a level the
    /// policy could have written (mid-ramp, ducked, faded out). Anything else was set by someone else
    /// since (the user, meanwhile).
    public func isScaledDown(_ current: ChannelVolumes) -> Bool {
        let own = own.values
        guard current.values.count == own.count, !own.isEmpty else { return false }
        // Each channel's ratio to its own volume; a raw unit of rounding per channel is allowed.
        var lowest = Double.infinity, highest = -Double.infinity, slack = 0.0
        for (now, mine) in zip(current.values, own) {
            if mine == 0 {
                guard now <= 1 else { return false }
                continue
            }
            guard now <= mine + 1 else { return false }
            let ratio = Double(now) / Double(mine)
            lowest = min(lowest, ratio)
            highest = max(highest, ratio)
            slack = max(slack, 2 / Double(mine))
        }
        return lowest == .infinity || highest - lowest <= slack
    }
}
