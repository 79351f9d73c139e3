/// The levels the daemon recently wrote to streams, by stream-restore key: what the server may have
/// saved for that key from our writes, and so may hand to the key's next stream.
///
/// module-stream-restore saves every volume written to a stream (ours included) as its key's entry
/// and gives it to the next stream of that key whose app sets no volume; WirePlumber does the same on
/// PipeWire, even over a volume the app set. So a new stream of a role or app that starts while
/// another stream of it is ducked or faded starts at *that* duck. Taken for the new stream's own
/// level, it would be ducked again from there and "restored" to the duck when the interruption ends:
/// left quiet by something that is over (found by `audio-policyd soak`). A new stream whose volume is
/// one we wrote for its key gets the own level (and mute) of the stream we wrote it to instead.
///
/// A saved mute is a second question, answered apart: PulseAudio saves a stream's mute only when a
/// client set it, and keeps the entry's older mute when only a volume was written; it restores the
/// mute even to a stream whose app sets its own volume. So a new stream can start at our duck with
/// the user's mute, or at its app's level with our mute (an output loss's instant mute, a fade-out's
/// end, on another stream of its key). The mute is ours when our mute is the newest one a stream of
/// the key was given (found by the soak: our mute taken for the user's was journaled and written back
/// as the key's entry; the user's mute under our duck was taken for a duck-free level).
public struct SavedWrites: Sendable {
    public typealias Origin = StartOrigin

    private struct Write: Sendable {
        /// What we wrote.
        var volume: ChannelVolumes
        /// The stream's own level at the time: what the key's entry should hold.
        var own: ChannelVolumes
    }

    /// The most writes remembered per key: a whole 300 ms ramp at 15 ms steps and then some.
    public static let capacity = 48
    /// The most settled ducks remembered per key, and keys remembered (``settledDucks``).
    public static let settledCapacity = 16
    public static let settledKeyCapacity = 64

    private var writes: [String: [Write]] = [:]
    /// An earlier run's changed streams, by key: its ramps passed through every step below their own
    /// level, and the server may have saved any of them.
    private var earlier: [String: [WrittenStream]] = [:]
    /// Keys whose entry last got a mute from us: the newest mute written to a stream of the key was
    /// the policy's, and no one has muted or unmuted a stream of it since.
    private var mutedKeys: Set<String> = []
    /// Keys whose saved mute an earlier run left as its own (``WrittenStream/savedMute``): a stream
    /// of the key with a higher index started after that run, and took the mute from the server.
    /// -1 when the mark was made on another server instance: every stream of the key started after it.
    private var earlierMutes: [String: EarlierMute] = [:]
    /// ``mutedKeys`` as a connection began, until the streams present at it are judged: they started
    /// before anything this run writes meanwhile (the soak, on PipeWire: recovery's connection heard a
    /// call and muted the music at once, and a music stream heard next, which its user had muted before
    /// the kill, was taken for one with that mute and unmuted after the call).
    private var mutedKeysAtConnection: Set<String>?
    /// ``earlierMutes`` as recovery left them, until the streams present at the connection are judged:
    /// this run's writes to the streams heard first (a call present fades the music present out at once;
    /// on PulseAudio a stream whose mute a client set, on WirePlumber any, saves its own mute with each
    /// step) make the key's saved mute theirs for streams that start from then on, never for those that
    /// started before the connection (the 120 s churn on both servers: a stream that started while no
    /// daemon ran, with the dead run's fade-out and mute, was heard after another stream of its key had
    /// been faded again, its mute taken for its user's, and the key repaired muted for good).
    private var earlierMutesAtConnection: [String: EarlierMute]?

    /// An earlier run's saved mute of a key, as its marks leave it (``SavedMuteMark``).
    private struct EarlierMute: Sendable {
        /// Streams of the key above this index started after that run (-1: every stream).
        var above: Int64
        /// Only those at a level of ours have it (``SavedMuteMark/atOurLevelsOnly``).
        var atOurLevelsOnly: Bool

        func covers(_ index: UInt32, atOurLevel: Bool) -> Bool {
            Int64(index) > above && (atOurLevel || !atOurLevelsOnly)
        }
    }
    /// The levels ducks of any run settled at, by key, oldest first (``rememberSettled(_:)``); keys in
    /// the order last added to.
    private var settled: [String: [Write]] = [:]
    private var settledKeys: [String] = []

    /// A volume written to a stream of `key` whose own level is `own` (a restore to `own` itself is
    /// no level of ours).
    public init() {}

    public mutating func wrote(_ volume: ChannelVolumes, key: String?, own: ChannelVolumes) {
        guard let key, !own.values.isEmpty, !volume.matches(own) else { return }
        Self.add(Write(volume: volume, own: own), to: &writes[key, default: []])
    }

    /// Adds `write` to a key's list in place: copied out of the dictionary and back, the list was copied
    /// whole on every ramp step (the dictionary still held it).
    private static func add(_ write: Write, to list: inout [Write]) {
        list.removeAll { $0.volume.matches(write.volume) }
        list.append(write)
        if list.count > capacity { list.removeFirst(list.count - capacity) }
    }

    /// We muted (or unmuted) a stream of `key`: the server saves that as the key's mute.
    public mutating func wroteMute(_ muted: Bool, key: String?) {
        guard let key else { return }
        if muted { mutedKeys.insert(key) } else { mutedKeys.remove(key) }
    }

    /// Someone else muted or unmuted a stream of `key`: the key's saved mute is theirs now. Returns
    /// whether it may have been ours before (this run's or an earlier run's).
    @discardableResult
    public mutating func theyMuted(key: String?) -> Bool {
        guard let key else { return false }
        let wasOurs = mutedKeys.remove(key) != nil
        return earlierMutes.removeValue(forKey: key) != nil || wasOurs
    }

    /// The server saved a stream's mute as `key`'s again, with a change of its level: the mute is ours
    /// when the policy holds that stream muted, else the stream's own. Returns whether that changed
    /// whose the key's saved mute is.
    public mutating func mutesSaved(ours: Bool, key: String?) -> Bool {
        // Called for every ramp step: with no mute of ours anywhere (the usual case) there is nothing to
        // hash or drop.
        guard let key, ours || !mutedKeys.isEmpty || !earlierMutes.isEmpty else { return false }
        if ours { return mutedKeys.insert(key).inserted }
        let changed = mutedKeys.remove(key) != nil || earlierMutes[key] != nil
        earlierMutes[key] = nil
        return changed
    }

    /// Whether the key's saved mute may be the policy's: this run's, or an earlier run's for streams that
    /// started after it.
    public func savedMuteMayBeOurs(key: String) -> Bool {
        mutedKeys.contains(key) || earlierMutes[key] != nil
    }

    /// Whether a muted start of `key` at sink input `index` has our saved mute: this run's, or an earlier
    /// run's when the stream started after it.
    /// `atOurLevel`: it started at a level we wrote for the key, which a mark kept only for those counts.
    public func savedMuteIsOurs(key: String, index: UInt32, atOurLevel: Bool = false) -> Bool {
        (mutedKeysAtConnection ?? mutedKeys).contains(key)
            || (earlierMutesAtConnection ?? earlierMutes)[key]?.covers(index, atOurLevel: atOurLevel) == true
    }

    /// The keys whose saved mute an earlier run's marks make ours, each with the index streams above
    /// which started later (-1: every stream), for the log of a recovery.
    public var earlierMuteMarks: [String: Int64] { earlierMutes.mapValues(\.above) }

    /// Whether the streams present at a connection are being judged (from ``connectionBegan()`` to
    /// ``presentStreamsJudged()``).
    public var judgingPresent: Bool { mutedKeysAtConnection != nil }

    /// A connection began: the streams present at it are judged next (``mutedKeysAtConnection``).
    public mutating func connectionBegan() {
        mutedKeysAtConnection = mutedKeys
        earlierMutesAtConnection = earlierMutes
    }

    /// The streams present at the connection were judged.
    public mutating func presentStreamsJudged() {
        mutedKeysAtConnection = nil
        earlierMutesAtConnection = nil
    }

    /// Whether the key's saved mute is this run's mute (the newest one a stream of it was given).
    public func savedMuteIsOurs(key: String?) -> Bool {
        key.map { mutedKeys.contains($0) } ?? false
    }

    /// What an earlier run left changed (its journal): it wrote to those streams too, and the server
    /// may have saved those writes for their keys and given them to streams that started while no
    /// daemon ran. Only the levels a change settles at are known: each stream's own level at each of
    /// the levels that run ducked to (``WrittenStream/duckLevels``), and faded out and muted if the policy
    /// muted it.
    /// `server` is the cookie of the server instance connected now: a mark made on another instance
    /// (the server restarted since) counts every stream of its key, whatever its index.
    public mutating func recovered(_ streams: [WrittenStream], server: UInt32? = nil) {
        earlierMutes = [:]
        for stream in streams {
            guard let key = stream.key, let mark = stream.savedMute else { continue }
            // Marks of one instance: the highest (streams up to it were known). A mark of another: -1.
            let restarted = mark.isOfAnotherInstance(than: server)
            let earlier = earlierMutes[key]
            let above = restarted || earlier?.above == -1 ? -1 : max(earlier?.above ?? -1, Int64(mark.above))
            // A plain mark of the key counts for every start above it.
            earlierMutes[key] = EarlierMute(above: above,
                                            atOurLevelsOnly: mark.atOurLevelsOnly && earlier?.atOurLevelsOnly != false)
        }
        if judgingPresent { earlierMutesAtConnection = earlierMutes }
        for stream in streams where !stream.own.values.isEmpty {
            if let key = stream.key { earlier[key, default: []].append(stream) }
            let own = stream.own
            for level in Set(stream.duckLevels) where level > 0 && level < 1 {
                wrote(own.scaled(by: level), key: stream.key, own: own)
            }
            // Its fade-out's end. The mute that may have come with it is ours only as ``earlierMutes``
            // says (a stream above the index that run saw): a start at that silence, unmuted, that its
            // user muted while no daemon ran is the user's (the soak, in CI: taken for ours, unmuted).
            // A fade at silence whose mute its user took off as the run died (``WrittenStream/silenced``) is
            // such an end too, muted or not.
            if stream.policyMuted || stream.silenced { wrote(own.scaled(by: 0), key: stream.key, own: own) }
        }
    }

    // MARK: - Settled ducks, across runs

    /// A stream ducked by a run, at each of its duck levels (``WrittenStream/duckLevels``): the levels
    /// its ducks settle at, which a server may keep long after the run (WirePlumber saves its file only
    /// after a second with no change anywhere, so a restart of the server can bring back any level
    /// that held for a second, our settled ducks among them, minutes or sessions later: the soak, on
    /// PipeWire). Only an own level whose channels differ is remembered: a duck of a balanced level is
    /// a level apps set themselves (−20 dB of 100 % is a media element's volume 0.1). Returns whether
    /// anything new was remembered.
    public mutating func rememberSettled(_ stream: WrittenStream) -> Bool {
        guard let key = stream.key, Self.isUnbalanced(stream.own) else { return false }
        var remembered = false
        for level in Set(stream.duckLevels).sorted() where level > 0 && level < 1 {
            remembered = rememberSettled(SettledDuck(key: key, volume: stream.own.scaled(by: level), own: stream.own))
                || remembered
        }
        return remembered
    }

    /// Every settled duck remembered, oldest key first: what outlives the run (``SettledDuckFile``).
    public var settledDucks: [SettledDuck] {
        settledKeys.flatMap { key in (settled[key] ?? []).map { SettledDuck(key: key, volume: $0.volume, own: $0.own) } }
    }

    /// Takes back what an earlier run remembered (``settledDucks``).
    public mutating func rememberSettled(_ ducks: [SettledDuck]) {
        for duck in ducks { _ = rememberSettled(duck) }
    }

    private mutating func rememberSettled(_ duck: SettledDuck) -> Bool {
        guard !duck.own.values.isEmpty, duck.volume.values.count == duck.own.values.count,
              !duck.volume.matches(duck.own) else { return false }
        var list = settled[duck.key, default: []]
        if list.contains(where: { $0.volume.values == duck.volume.values && $0.own.values == duck.own.values }) { return false }
        list.removeAll { $0.volume.matches(duck.volume) }
        list.append(Write(volume: duck.volume, own: duck.own))
        if list.count > Self.settledCapacity { list.removeFirst(list.count - Self.settledCapacity) }
        settled[duck.key] = list
        settledKeys.removeAll { $0 == duck.key }
        settledKeys.append(duck.key)
        if settledKeys.count > Self.settledKeyCapacity {
            for forgotten in settledKeys.prefix(settledKeys.count - Self.settledKeyCapacity) { settled[forgotten] = nil }
            settledKeys.removeFirst(settledKeys.count - Self.settledKeyCapacity)
        }
        return true
    }

    /// Where a new stream of `key` (sink input `index`) starting at `volume` (`muted`) got that from,
    /// if from us: the newest write of ours at its volume (whose `own` is the stream's real own level),
    /// and our saved mute — this run's, or an earlier run's when the stream started after it, or one an
    /// write of ours not yet applied left saved (`mutedByUs`: what the mute saved before that write
    /// was, when one is in flight). Nil when neither is ours.
    /// `balancedSteps`: whether a balanced copy of a balanced own level counts as an earlier run's ramp
    /// step too (only while its recovery's writes may not be saved yet: ``LevelOwnership``).
    public func origin(of volume: ChannelVolumes, muted: Bool, key: String?, index: UInt32,
                       mutedByUs savedBefore: Bool? = nil, balancedSteps: Bool = false) -> Origin? {
        guard let key else { return nil }
        let mutedByUs = muted && (savedBefore ?? savedMuteIsOurs(key: key, index: index))
        // At a level of ours, also a mute an earlier run's mark keeps only for those.
        let mutedByUsHere = muted && (savedBefore ?? savedMuteIsOurs(key: key, index: index, atOurLevel: true))
        if let write = writes[key]?.last(where: { $0.volume.matches(volume) }) {
            return Origin(own: write.own, mutedByUs: mutedByUsHere)
        }
        // A step of an earlier run's ramp: a copy of a journaled stream's own level scaled down by one
        // factor. Told apart from a user's level when the own level's channels differ; a balanced one
        // (a fresh server's 100 %) only with `balancedSteps` (a user's balanced level is a scaled copy of
        // every balanced level; the soak, on PipeWire: a SIGKILL mid-duck left 54 % of the music's
        // 100 % saved, the next daemon took it for the music's own level and saved it back for good).
        let earlierStep = earlier[key]?.last { stream in
            !volume.matches(stream.own) && (balancedSteps || Self.isUnbalanced(stream.own)) && stream.isScaledDown(volume)
        }
        if let stream = earlierStep {
            return Origin(own: stream.own, mutedByUs: mutedByUsHere || (muted && stream.policyMuted))
        }
        // A duck some run settled at, which the server kept (``rememberSettled(_:)``).
        if let duck = settled[key]?.last(where: { $0.volume.matches(volume) }) {
            return Origin(own: duck.own, mutedByUs: mutedByUsHere)
        }
        return mutedByUs ? Origin(own: volume, mutedByUs: true) : nil
    }

    /// The own level under `volume` if it is a level some run's ducks of `key` settled at
    /// (``rememberSettled(_:)``): a saved entry at it is ours, kept by a server that restarted.
    public func settledOwn(key: String, volume: ChannelVolumes) -> ChannelVolumes? {
        settled[key]?.last { $0.volume.matches(volume) }?.own
    }

    /// Whether the channels of `volume` differ by more than 2 % of the loudest.
    public static func isUnbalanced(_ volume: ChannelVolumes) -> Bool {
        guard let top = volume.values.max(), let bottom = volume.values.min(), top > 0 else { return false }
        return Double(top - bottom) > Double(top) * 0.02
    }
}
