import AudioPolicy
import EventLoop
import Logging
import SoundBackend

/// A server's saved levels as the daemon must deal with them: the saved-entry I/O (reading entries,
/// writing repairs, through the backend's ``SavedLevels``) around the levels stage's decisions
/// (``LevelOwnership``).
///
/// Only a server with saved levels needs any of this (PulseAudio's module-stream-restore, WirePlumber's
/// restore-stream through pipewire-pulse): there every level written to a stream, ours included,
/// becomes its app's or role's entry and the start of its next stream. The daemon's actuation owns one
/// for its whole life, since what a server saved outlives a connection to it, and uses it while the
/// connected backend has saved levels (ALSA saves nothing); no backend carries it, and the seam
/// (`SoundBackend`) holds only the I/O it drives. It turns snapshots into the facts the ledger takes,
/// with the loop's clock and the connected server's saving model (``ServerSaving``) and instance, and
/// carries out the repairs. Touched only on the loop's thread.
final class SavedLevelsBook {
    typealias Origin = StartOrigin

    /// How long after our last write to a stream its end still gets a repair of its saved entry (µs).
    static let lateWriteWindow = LevelOwnership.lateWriteWindow

    /// Where repairs are logged (the daemon hands its own).
    var log = Logger(label: "audio-policyd")
    /// The levels stage's decisions: whose each key's saved level and mute are.
    private var ledger = LevelOwnership()
    /// The connection, while there is one.
    private var server: (any StreamServer)?

    init() {}

    /// The connected server instance's cookie, once the server told it (journaled with each stream).
    var serverInstance: UInt32? {
        refresh()
        return ledger.server
    }

    // MARK: - The connection

    /// A new connection of the backend: its saved levels are the ones to read and repair.
    func connected(to server: any StreamServer) {
        self.server = server
        ledger.connected(saving: Self.saving(of: server.savedLevels), server: server.savedLevels?.serverCookie)
    }

    func disconnected() {
        server = nil
        ledger.disconnected()
    }

    /// The connection's saved levels, while there is one that has them.
    private var levels: (any SavedLevels)? { server?.savedLevels }

    private static func saving(of levels: (any SavedLevels)?) -> ServerSaving? {
        levels.map { $0.savesMuteWithEveryChange ? .wirePlumber : .pulseAudio }
    }

    /// The server's kind and instance are told once it is ready, after ``connected(to:)``: the ledger
    /// hears them before each fact.
    private func refresh() {
        let levels = levels
        let saving = Self.saving(of: levels), cookie = levels?.serverCookie
        if saving != ledger.saving || cookie != ledger.server { ledger.serverKnown(saving: saving, server: cookie) }
    }

    // MARK: - Streams

    /// A stream appeared. Returns whether its key's saved mute is ours. One announced without its volume
    /// and mute (pipewire-pulse) counts once they arrive (``volumeArrived(_:)``).
    func streamAppeared(_ input: SinkInput) -> Bool {
        refresh()
        guard !input.volumePending else {
            ledger.announcedWithoutVolume(input.index, key: input.restoreID, now: MainLoop.monotonicMicroseconds())
            return false
        }
        return ledger.streamAppeared(input.index, key: input.restoreID, muted: input.muted)
    }

    /// The volume and mute of a stream announced without them arrived, and where its start came from was
    /// asked (``LevelOwnership/volumeArrived(_:key:muted:)``). Returns whether its key's saved mute is ours.
    func volumeArrived(_ input: SinkInput) -> Bool {
        ledger.volumeArrived(input.index, key: input.restoreID, muted: input.muted)
    }

    /// The daemon has acted on `index`'s start: it counts as seen (``LevelOwnership/startJudged(_:)``).
    /// Returns whether the journal's marks rose.
    func startJudged(_ index: UInt32) -> Bool {
        ledger.startJudged(index)
    }

    /// Recovery unmuted `input` (``LevelOwnership/recoveryUnmuted(_:key:now:)``).
    func recoveryUnmuted(_ input: SinkInput) {
        ledger.recoveryUnmuted(input.index, key: input.restoreID, now: MainLoop.monotonicMicroseconds())
    }

    /// The streams present at a connection were heard of (``LevelOwnership/streamsJudged()``): returns the
    /// keys whose saved mute changed hands.
    func streamsJudged() -> [String] {
        ledger.streamsJudged()
    }

    /// A stream ended: what was kept of it goes, and the verdict says whether its key's saved entry needs
    /// a repair (``LevelOwnership/streamEnded(_:journaled:now:)``). `journaled`: the journal has an entry of it.
    func streamEnded(_ index: UInt32, journaled: Bool) -> EndRepair {
        ledger.streamEnded(index, journaled: journaled, now: MainLoop.monotonicMicroseconds())
    }

    /// `input`'s record for the journal, with its own level `own` (``LevelOwnership/written(_:key:own:usersMute:policyMutedOnRecord:unmuteInFlight:duckLevels:)``).
    func written(_ input: SinkInput, own: ChannelVolumes, policyMutedOnRecord: Bool, unmuteInFlight: Bool,
                        duckLevels: [Double], silenced: Bool = false) -> WrittenStream {
        refresh()
        return ledger.written(input.index, key: input.restoreID, own: own, usersMute: input.muted,
                              policyMutedOnRecord: policyMutedOnRecord, unmuteInFlight: unmuteInFlight,
                              duckLevels: duckLevels, silenced: silenced)
    }

    /// The saved-mute mark of an ended stream's journal record, kept until its repair is answered
    /// (``LevelOwnership/savedMuteMark(ofEnded:)``).
    func savedMuteMark(ofEnded stream: WrittenStream) -> SavedMuteMark? {
        refresh()
        return ledger.savedMuteMark(ofEnded: stream)
    }

    // MARK: - What we wrote

    /// A volume written to `input`, whose own level is `own`. Returns whether that changed whose the
    /// key's saved mute is.
    func wrote(_ volume: ChannelVolumes, to input: SinkInput, own: ChannelVolumes, policyMuted: Bool) -> Bool {
        refresh()
        return ledger.wrote(volume, to: input.index, key: input.restoreID, own: own, policyMuted: policyMuted,
                            muted: input.muted, now: MainLoop.monotonicMicroseconds())
    }

    /// Recovery or a saved start's correction wrote `input`'s own level back
    /// (``LevelOwnership/wroteOwnLevel(to:key:heldMuted:usersMute:recovery:now:)``).
    /// `usersMute`: its mute as its user has it once the writes sent with this one are applied. Returns
    /// whether the key's saved mute as its users have it changed.
    @discardableResult
    func wroteOwnLevel(to input: SinkInput, heldMuted: Bool, usersMute: Bool, recovery: Bool = false) -> Bool {
        refresh()
        return ledger.wroteOwnLevel(to: input.index, key: input.restoreID, heldMuted: heldMuted,
                                    usersMute: usersMute, recovery: recovery, now: MainLoop.monotonicMicroseconds())
    }

    /// The level of `input` changed (``LevelOwnership/levelChanged(_:key:policyMuted:muted:)``).
    func levelChanged(_ input: SinkInput, policyMuted: Bool) -> Bool {
        refresh()
        return ledger.levelChanged(input.index, key: input.restoreID, policyMuted: policyMuted, muted: input.muted)
    }

    /// A newer snapshot of `input` (``LevelOwnership/streamChanged(_:key:theirLevel:policyMuted:muted:)``).
    func streamChanged(_ input: SinkInput, theirLevel: Bool, policyMuted: Bool) -> Bool {
        refresh()
        return ledger.streamChanged(input.index, key: input.restoreID, theirLevel: theirLevel, policyMuted: policyMuted,
                                    muted: input.muted)
    }

    /// The server reported `input` as it is now (``LevelOwnership/seen(_:key:muted:)``).
    func seen(_ input: SinkInput) {
        ledger.seen(input.index, key: input.restoreID, muted: input.muted)
    }

    /// A mute or unmute written to `input`, which the server saves as its key's mute.
    func wroteMute(_ muted: Bool, to input: SinkInput) {
        ledger.wroteMute(muted, to: input.index, key: input.restoreID, now: MainLoop.monotonicMicroseconds())
    }

    /// The server has answered every write sent before `time` (µs, ``MainLoop/monotonicMicroseconds()``):
    /// our unmutes among them are saved (``LevelOwnership/writesAnswered(sentBefore:)``).
    func writesAnswered(sentBefore time: UInt64) {
        for key in ledger.writesAnswered(sentBefore: time) { onSavedMuteChanged?(key) }
    }

    /// Someone else muted or unmuted `input`: its key's saved mute is theirs.
    func theyMuted(_ input: SinkInput) {
        ledger.theyMuted(input.index, key: input.restoreID, muted: input.muted)
    }

    /// Streams ducked now (their journal entries): the levels their ducks settle at outlive the run;
    /// ``onSettledChange`` is called when one is new.
    func rememberSettled(_ streams: [WrittenStream]) {
        if ledger.rememberSettled(streams) { onSettledChange?() }
    }

    /// What an earlier run remembered (``settledDucks``), taken back at start.
    func rememberSettled(_ ducks: [SettledDuck]) {
        ledger.rememberSettled(ducks)
    }

    /// The settled ducks remembered, for the next run.
    var settledDucks: [SettledDuck] { ledger.settledDucks }

    /// Called when a settled duck was remembered for the first time: the daemon keeps them in a file.
    var onSettledChange: (() -> Void)?

    /// Called with a key whose saved mute a taken repair made its user's where it was ours
    /// (``LevelOwnership/entryRepaired(key:muted:now:)``), or whose saved mute as its users have it a repair changed
    /// (``LevelOwnership/repairSent(key:muted:over:)``): the journal's entries of the key's streams must say so.
    var onSavedMuteChanged: ((String) -> Void)?

    /// What an earlier run (or a server that went away) left changed, before its streams are restored.
    /// `gone`: the indexes of those no longer present; `present`: every stream now, by index, with its
    /// mute; the entries saved muted are the connection's (``SavedLevels/savedAtStart``).
    func recovered(_ streams: [WrittenStream], gone: Set<UInt32>, present: [UInt32: Bool]) {
        refresh()
        let savedMuted = levels?.savedAtStart.map { Set($0.filter(\.muted).map(\.name)) }
        ledger.recovered(streams, gone: gone, present: present, savedMuted: savedMuted,
                         now: MainLoop.monotonicMicroseconds())
    }

    /// The keys whose saved mute recovery takes for an earlier run's, with the index above which a
    /// stream started later (-1: all), for the log.
    var earlierMuteMarks: [String: Int64] { ledger.earlierMuteMarks }

    // MARK: - A new stream

    /// Where a new stream's start came from, if the server gave it a level or mute of ours.
    func origin(of input: SinkInput) -> Origin? {
        refresh()
        return ledger.origin(of: input.index, key: input.restoreID, volume: input.volume, muted: input.muted,
                             volumeKnown: !input.volumePending && input.hasVolume, announcedAt: input.announcedAt,
                             now: MainLoop.monotonicMicroseconds())
    }

    // MARK: - Repairs

    /// Repairs every saved entry at a level some run's ducks settled at (``LevelOwnership/settledRepair(key:saved:)``),
    /// keeping its mute and device: on connecting, as a server that restarted may have brought one back.
    func repairSettledEntries() {
        guard let server, let levels = server.savedLevels, !ledger.settledDucks.isEmpty else { return }
        refresh()
        levels.readSavedEntries { [weak self] saved in
            guard let self, let saved, self.server === server, server.isReady else { return }
            for entry in saved {
                guard let volume = entry.volume, var own = self.ledger.settledRepair(key: entry.name, saved: volume)
                else { continue }
                if own.channelMap.isEmpty { own.channelMap = volume.channelMap }
                // Logged as it is sent: a stream of the key may start before the server's answer arrives.
                self.log.info("repairing the saved volume of \(entry.name): \(volume) is a duck some run settled at; writing \(own)")
                levels.writeSavedEntry(name: entry.name, volume: own, muted: entry.muted, device: entry.device) {
                    [weak self] taken in
                    if !taken { self?.log.notice("the repair of the saved volume of \(entry.name) was not taken") }
                }
            }
        }
    }

    /// Writes each stream's own volume and mute back as its saved entry (keeping the saved device), then
    /// calls `completion` with the connection the writes went to. Nothing is written, and `completion`
    /// is not called, if the connection is lost first; with no saved levels there is nothing to write,
    /// and `completion` is called at once.
    func repair(_ streams: [WrittenStream], completion: @escaping (any StreamServer) -> Void) {
        guard let server else { return }
        guard let levels = server.savedLevels else { return completion(server) }
        ledger.repairsSent(streams.map(\.index))
        levels.readSavedEntries { [weak self] saved in
            guard let self else { return }
            self.ledger.repairsAnswered(streams.map(\.index))
            guard let connection = self.server, connection === server, connection.isReady else { return }
            // Done only once the server has taken every write: a repair sent as the server goes away
            // (its streams end first, then the connection) is lost, and its entry stays in the journal
            // for the next connection to repair (seen by the soak: a fade-out's mute saved for good).
            var pending = streams.filter { $0.key != nil }.count
            var failed = false
            // The entries' mutes as the repairs sent so far leave them: a second repair of one key writes
            // over the first's, not over the entry as read back.
            var mutes: [String: Bool] = [:]
            for stream in streams {
                guard let name = stream.key else { continue }
                let entry = saved?.first { $0.name == name }
                let device = entry?.device
                let before = mutes[name] ?? entry?.muted
                let muted = self.ledger.repairMute(of: stream, saved: before)
                mutes[name] = muted
                if self.ledger.repairSent(key: name, muted: muted, over: before, for: stream.index) {
                    self.onSavedMuteChanged?(name)
                }
                let volume = stream.own
                levels.writeSavedEntry(name: name, volume: volume, muted: muted, device: device) {
                    [weak self] taken in
                    guard let self else { return }
                    if taken {
                        if self.ledger.entryRepaired(key: name, muted: muted, level: volume,
                                                     now: MainLoop.monotonicMicroseconds()) {
                            self.onSavedMuteChanged?(name)
                        }
                        self.log.info("repaired the saved volume of \(name): \(volume)\(muted ? ", muted" : "")")
                    } else {
                        failed = true
                        self.log.notice("the repair of the saved volume of \(name) was not taken; kept for the next connection")
                    }
                    pending -= 1
                    if pending == 0, !failed { completion(connection) }
                }
            }
            if pending == 0 { completion(connection) }
        }
    }
}
