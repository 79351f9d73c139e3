import AudioPolicy
import SoundBackend

/// What the daemon changed on one stream, written down *before* it changed it: enough to put the
/// stream back as the user had it, or, once the stream is gone, to repair the volume and mute the
/// server saved for its app or role (module-stream-restore).
///
/// The volume is the stream's own, user-set, per-channel volume (what a policy factor of 1 means),
/// never a ducked one.
public struct JournalEntry: Codable, Hashable, Sendable {
    /// The sink input's index (unique for one server's lifetime).
    public var sinkInput: UInt32
    /// The stream's `module-stream-restore.id`, the key of its saved entry, if it has one.
    public var restoreID: String?
    /// `application.name`, for logs and to tell this stream from a later one with the same index.
    public var application: String?
    /// `application.process.id`, to tell this stream from a later one with the same index (after a
    /// server restart, indices start again).
    public var pid: Int?
    /// The user's own per-channel volume, in raw `pa_volume_t` units.
    public var volume: [UInt32]
    /// The channel positions (`pa_channel_position_t`) of ``volume``; empty when unknown.
    public var channelMap: [Int32]
    /// Whether the stream was muted by the user (or its app) before the policy touched it.
    public var muted: Bool
    /// Whether the policy's mute fallback muted it (so recovery unmutes it).
    public var policyMuted: Bool
    /// Set when that mute is held until the user acts, because the stream's output went away: recovery
    /// keeps it muted (at its own level) and the next run holds it on, rather than letting it play on the
    /// speakers. Nil otherwise, and in older journals.
    public var heldForLoss: Bool?
    /// The MPRIS players the policy paused for this stream, meaning to resume them.
    public var pausedPlayers: [String]
    /// Every factor below 1 the daemon had ducked a stream to when the entry was written (ascending).
    ///
    /// Its ramps settled at those, and the server may have saved one of them for the stream's key
    /// (module-stream-restore) and given it to a stream that started while no daemon ran: recovery takes
    /// a start at one of them for ours. Written down rather than read from the policy the next run has
    /// loaded, which may not be the one that ducked. Nil in journals written before it was kept.
    public var duckLevels: [Double]?
    /// Set while the policy's mute of this stream is its key's saved mute (no one else has muted or
    /// unmuted a stream of the key since): the highest sink-input index the run had seen, kept above
    /// every stream of the key it knew.
    ///
    /// The server gives that saved mute to the key's next stream, and a stream that starts while no
    /// daemon runs cannot be told from one its user muted by its level (an output loss mutes at once,
    /// at the stream's own level). Indexes only grow on one server: a stream of the key above this one
    /// started after the run ended, and its mute is the policy's, to undo. A stream at or below it was
    /// known to the run, and a mute it has is its user's. Nil otherwise, and in older journals.
    public var savedMuteAbove: UInt32?
    /// The server instance ``savedMuteAbove`` counts on (``SavedMuteMark/server``). On another one
    /// (the server restarted since) every stream started after the run, whatever its index, so a stream
    /// of the key with the saved mute has the policy's. Nil when the server did not tell, and in older
    /// journals: then only the index counts.
    public var savedMuteServer: UInt32?
    /// Set when ``savedMuteAbove`` is kept for the policy's unmute of the stream that the server had not
    /// answered: the key's saved mute is ours above it only if that unmute was lost
    /// (``SavedMuteMark/ifUnmuteLost``). Nil otherwise, and in older journals.
    public var savedMuteIfUnmuteLost: Bool?
    /// For ``savedMuteIfUnmuteLost``: the sink input whose unmute it waits on, when it is another stream
    /// of the key (``SavedMuteMark/unmuteOf``). Nil otherwise, and in older journals.
    public var savedMuteUnmuteOf: UInt32?
    /// Set when ``savedMuteAbove`` counts only for a stream of the key that started at a level of ours
    /// (``SavedMuteMark/atOurLevelsOnly``): the mark our repair over our mute left on, which a start that
    /// overtook the repair has. Nil otherwise, and in older journals.
    public var savedMuteAtOurLevelsOnly: Bool?
    /// The server instance the stream played on (its cookie, ``SavedLevels/serverCookie``): recovery
    /// never takes a stream of another instance for this one (``WrittenStream/mayPlay(on:)``). Nil when
    /// the server did not tell (ALSA), and in older journals.
    public var server: UInt32?
    /// For a stream the policy muted: its key's saved mute as its users have it (the mute, with the
    /// policy's taken off, of the stream whose mute the server saved last for the key), which a repair of
    /// the key's entry writes once the stream is gone (``WrittenStream/keyUsersMute``). Nil otherwise, and
    /// in older journals.
    public var keyUsersMute: Bool?
    /// Set when the server saves the stream's mute with each change of its level (PulseAudio: a client
    /// set it, or it started muted): recovery's write of its level saves that mute as its key's
    /// (``WrittenStream/muteSaved``). Nil otherwise, and in older journals.
    public var muteSaved: Bool?
    /// Set when the policy's factor on the stream was 0 (a fade-out at silence): the server may have saved
    /// that silence for its key (``WrittenStream/silenced``). Nil otherwise, and in older journals.
    public var silenced: Bool?

    public init(sinkInput: UInt32, restoreID: String?, application: String?, pid: Int?, volume: [UInt32],
                channelMap: [Int32], muted: Bool, policyMuted: Bool = false, heldForLoss: Bool? = nil,
                pausedPlayers: [String] = [], duckLevels: [Double]? = nil, savedMuteAbove: UInt32? = nil,
                savedMuteServer: UInt32? = nil, savedMuteIfUnmuteLost: Bool? = nil, savedMuteUnmuteOf: UInt32? = nil,
                server: UInt32? = nil, keyUsersMute: Bool? = nil, muteSaved: Bool? = nil,
                silenced: Bool? = nil) {
        self.sinkInput = sinkInput
        self.restoreID = restoreID
        self.application = application
        self.pid = pid
        self.volume = volume
        self.channelMap = channelMap
        self.muted = muted
        self.policyMuted = policyMuted
        self.heldForLoss = heldForLoss
        self.pausedPlayers = pausedPlayers
        self.duckLevels = duckLevels
        self.savedMuteAbove = savedMuteAbove
        self.savedMuteServer = savedMuteServer
        self.savedMuteIfUnmuteLost = savedMuteIfUnmuteLost
        self.savedMuteUnmuteOf = savedMuteUnmuteOf
        self.server = server
        self.keyUsersMute = keyUsersMute
        self.muteSaved = muteSaved
        self.silenced = silenced
    }

    /// The user's own volume with its channel map.
    public var ownVolume: ChannelVolumes { ChannelVolumes(values: volume, channelMap: channelMap) }

    /// Whether `input`, on server instance `instance`, is the stream this entry was written for (same
    /// instance, same index, and nothing that names its owner has changed), rather than a later stream
    /// that was given the same index.
    public func describes(_ input: SinkInput, on instance: UInt32?) -> Bool {
        input.index == sinkInput && input.restoreID == restoreID && input.applicationName == application
            && input.processID == pid && written.mayPlay(on: instance)
    }

    /// Whether `current` is a copy of the user's own volume scaled down by one common factor: a volume
    /// the policy could have written (mid-ramp, ducked, faded out). Anything else was set by someone
    /// else since (the user, meanwhile), and recovery leaves it alone.
    public func isScaledDown(_ current: ChannelVolumes) -> Bool {
        written.isScaledDown(current)
    }

    /// What the saved-level bookkeeping needs of the entry (``SavedLevelsBook``).
    public var written: WrittenStream {
        WrittenStream(index: sinkInput, key: restoreID, own: ownVolume, muted: muted, policyMuted: policyMuted,
                      duckLevels: duckLevels ?? [],
                      savedMute: savedMuteAbove.map {
                          SavedMuteMark(above: $0, server: savedMuteServer, ifUnmuteLost: savedMuteIfUnmuteLost == true,
                                        unmuteOf: savedMuteUnmuteOf,
                                        atOurLevelsOnly: savedMuteAtOurLevelsOnly == true)
                      },
                      server: server, keyUsersMute: keyUsersMute, muteSaved: muteSaved == true,
                      silenced: silenced == true)
    }
}

extension JournalEntry {
    /// The entry for `input` as it is now: `written`, its record from the levels stage
    /// (``LevelOwnership/written(_:key:own:usersMute:policyMutedOnRecord:unmuteInFlight:duckLevels:)``),
    /// with what names its owner, whether the policy holds its mute for a lost output, and the players
    /// the policy paused for it.
    init(_ input: SinkInput, written: WrittenStream, heldForLoss: Bool, pausedPlayers: [String]) {
        self.init(sinkInput: input.index, restoreID: input.restoreID, application: input.applicationName,
                  pid: input.processID, volume: written.own.values, channelMap: written.own.channelMap,
                  muted: written.muted, policyMuted: written.policyMuted,
                  heldForLoss: written.policyMuted && heldForLoss ? true : nil, pausedPlayers: pausedPlayers,
                  duckLevels: written.duckLevels, server: written.server, keyUsersMute: written.keyUsersMute,
                  muteSaved: written.muteSaved ? true : nil, silenced: written.silenced ? true : nil)
        markSavedMute(written.savedMute)
    }

    /// Sets where the key's saved mute is the policy's (``savedMuteAbove`` and the fields beside it) to
    /// `mark`; none for an entry the policy does not mute.
    mutating func markSavedMute(_ mark: SavedMuteMark?) {
        let mark = policyMuted ? mark : nil
        savedMuteAbove = mark?.above
        savedMuteServer = mark?.server
        savedMuteIfUnmuteLost = mark?.ifUnmuteLost == true ? true : nil
        savedMuteUnmuteOf = mark?.unmuteOf
        savedMuteAtOurLevelsOnly = mark?.atOurLevelsOnly == true ? true : nil
    }
}
