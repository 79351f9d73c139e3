import AudioPolicy
import EventLoop
import PulseBackend
import SoundBackend

/// A sound server in memory, for unit tests of the daemon's actuation and recovery without a real one.
///
/// It keeps sink inputs (properties, per-channel volume, mute, corked) and a stream-restore table, and
/// records every write in order. Connections (``daemonConnections()``, a daemon's server factory) hear of
/// it the way libpulse tells: on the loop, never inside the call that caused it; `.ready`, then the
/// initial snapshot, then changes, each change marked as the echo of the connection's own write or as
/// someone else's. Like module-stream-restore, a volume or mute written to a stream is saved for its
/// restore key, and a new stream with a saved key starts at the saved level. A change saves the stream's
/// mute with its volume as WirePlumber does (``savesMuteWithEveryChange``), or, turned off, only once a
/// client set that mute or the server restored it, as PulseAudio does.
final class FakeSoundServer {
    /// One write a client sent, in the order sent.
    enum Write: Equatable, CustomStringConvertible {
        case volume(UInt32, ChannelVolumes)
        case mute(UInt32, Bool)
        case saved(String, ChannelVolumes?, muted: Bool)

        var description: String {
            switch self {
            case let .volume(index, volume): "volume \(index) \(volume)"
            case let .mute(index, muted): "mute \(index) \(muted)"
            case let .saved(name, volume, muted): "saved \(name) \(volume.map { "\($0)" } ?? "-") muted \(muted)"
            }
        }
    }

    private(set) var streams: [UInt32: SinkInput] = [:]
    /// The outputs, by index (none unless a test adds them; streams play on sink 0 unless told otherwise).
    private(set) var sinks: [UInt32: Sink] = [:]
    /// The stream-restore table, by key.
    var saved: [String: StreamRestoreEntry] = [:]
    /// The mutes the server restored to streams announced before their volume, told with it.
    private var lateMutes: [UInt32: Bool] = [:]
    private(set) var writes: [Write] = []
    /// Whether every change of a stream saves its mute too (WirePlumber), or only a mute a client set or
    /// the server restored (PulseAudio).
    var savesMuteWithEveryChange = true
    /// Streams whose mute a client set or the server restored: PulseAudio saves it with each change.
    private var muteSaved: Set<UInt32> = []
    /// Streams whose next change by someone else a write of the daemon's still on its way will overtake.
    private var overtaken: Set<UInt32> = []
    /// Called as each write is sent, before the server applies it.
    var onWrite: (Write) -> Void = { _ in }
    private(set) var isUp = true
    /// The instance's cookie (``SavedLevels/serverCookie``): new each time the server comes back.
    private(set) var cookie = UInt32.random(in: 1...UInt32.max)
    private var connections: [FakeServerConnection] = []
    private var nextIndex: UInt32 = 1

    /// A daemon's server factory: a new connection for each (re)connect, as ``BackendChoice/connection(socketPath:)``
    /// makes (the daemon keeps one bookkeeping of the saved levels for all of them).
    func daemonConnections() -> (MainLoop) -> any StreamServer {
        { [unowned self] loop in
            let connection = FakeServerConnection(server: self, loop: loop)
            connections.append(connection)
            return connection
        }
    }

    // MARK: - What a test does

    static let stereo: [Int32] = [1, 2]

    /// A new playback stream, at its key's saved level if there is one (else `volume`), of a process of
    /// its own unless `pid` is given (the engine never lets an app interrupt itself). Returns its index.
    /// With `volumePending`, it is announced as pipewire-pulse does, before its volume (every channel at
    /// 0); ``volumeArrives(_:_:)`` tells the volume later. With `appSetsVolume`, its app sets `volume`
    /// itself, and the server restores only the key's saved mute (as PulseAudio does). With `appMutes`, its
    /// app starts it muted whatever its key's saved mute. `announcedAt`: when its announcement reached the
    /// daemon (``SinkInput/announcedAt``), if before it is told.
    @discardableResult
    func addStream(role: String?, application: String, volume: [UInt32], muted: Bool = false,
                   corked: Bool = false, pid: Int? = nil, sink: UInt32 = 0, volumePending: Bool = false,
                   appSetsVolume: Bool = false, appMutes: Bool = false, announcedAt: UInt64? = nil) -> UInt32 {
        let index = nextIndex
        nextIndex += 1
        let pid = pid ?? 4000 + Int(index)
        var properties = ["application.name": application, "application.process.id": String(pid),
                          "media.name": "\(application) stream"]
        let key = role.map { "sink-input-by-media-role:\($0)" } ?? "sink-input-by-application-name:\(application)"
        properties["module-stream-restore.id"] = key
        if let role { properties["media.role"] = role }
        var level = ChannelVolumes(values: volume, channelMap: Self.stereo)
        var isMuted = muted
        if let entry = saved[key] {
            if !appSetsVolume, let savedVolume = entry.volume, savedVolume.channels == volume.count { level = savedVolume }
            isMuted = entry.muted || appMutes
            muteSaved.insert(index)
        }
        var input = SinkInput(index: index, clientIndex: index + 100, sinkIndex: sink, name: "\(application) stream",
                              properties: properties, volume: level, muted: isMuted, corked: corked)
        input.announcedAt = announcedAt
        if volumePending {
            // As pipewire-pulse announces it: at 0 and unmuted; the restored volume and mute come later.
            input.volume = ChannelVolumes(values: volume.map { _ in 0 }, channelMap: Self.stereo)
            input.volumePending = true
            input.muted = false
            lateMutes[index] = isMuted
        }
        streams[index] = input
        for connection in connections { connection.added(input) }
        return index
    }

    /// Someone else (the user, a mixer) sets a stream's volume.
    func userSetsVolume(_ index: UInt32, _ volume: [UInt32]) {
        apply(index, by: nil) { $0.volume = ChannelVolumes(values: volume, channelMap: Self.stereo) }
    }

    /// Someone else sets a stream's volume while a volume write of the daemon's to it is still on its way
    /// (pipewire-pulse shows a write only once it has answered it): the change is told with
    /// ``SinkInput/theirVolumeOvertaken``, and then that write, `stale`, lands over it, told as its echo.
    func userSetsVolume(_ index: UInt32, _ volume: [UInt32], overtakenBy stale: [UInt32]) {
        overtaken.insert(index)
        userSetsVolume(index, volume)
        overtaken.remove(index)
        guard let daemon = connections.first else { return }
        apply(index, by: daemon) { $0.volume = ChannelVolumes(values: stale, channelMap: Self.stereo) }
    }

    /// A music stream of `application` that starts from `key`'s entry as it is before the next write of that
    /// entry (a repair), as the server began it before it applied the write, told after the write's answer.
    /// PulseAudio, which applies a write before it answers it, announces such a stream before the answer
    /// (a client asks for its description then, which comes after the answer); WirePlumber, which applies
    /// what pipewire-pulse passes on later (``savesMuteWithEveryChange``), may announce it after. Its index
    /// is in ``overtakingStarts`` once it is added.
    func startsOvertakingTheNextWrite(of key: String, role: String, application: String, volume: [UInt32]) {
        overtakingNextWrite[key] = (role, application, volume)
    }

    /// The streams ``startsOvertakingTheNextWrite(of:role:application:volume:)`` added, by key.
    private(set) var overtakingStarts: [String: UInt32] = [:]
    private var overtakingNextWrite: [String: (role: String, application: String, volume: [UInt32])] = [:]
    /// When the stream that overtakes the write of a key's entry was announced, on PulseAudio: before the answer.
    private var overtakingAnnounced: [String: UInt64] = [:]

    /// Called by a connection once it has told the answer to a write of `key`'s entry: the stream that
    /// overtook the write, if any, is told now, from `entry`, the one before that write.
    fileprivate func savedEntryAnswered(_ key: String, before entry: StreamRestoreEntry?) {
        guard let start = overtakingNextWrite.removeValue(forKey: key) else { return }
        let now = saved[key]
        saved[key] = entry
        overtakingStarts[key] = addStream(role: start.role, application: start.application, volume: start.volume,
                                          announcedAt: overtakingAnnounced.removeValue(forKey: key))
        saved[key] = now
    }

    /// Someone else (the user, a mixer) mutes or unmutes a stream.
    func userSetsMute(_ index: UInt32, _ muted: Bool) {
        muteSaved.insert(index)
        apply(index, by: nil) { $0.muted = muted }
    }

    /// Its app starts (or resumes) playing a corked stream.
    func uncork(_ index: UInt32) {
        apply(index, by: nil) { $0.corked = false }
    }

    /// The volume of a stream announced with `volumePending` arrives, with the mute the server restored
    /// (nobody changed them: the server tells them late).
    func volumeArrives(_ index: UInt32, _ volume: [UInt32]) {
        let muted = lateMutes.removeValue(forKey: index)
        apply(index, by: nil) {
            $0.volume = ChannelVolumes(values: volume, channelMap: Self.stereo)
            $0.volumePending = false
            if let muted { $0.muted = muted || $0.muted }
        }
    }

    /// As ``volumeArrives(_:_:)``, but restored only now, as WirePlumber restores a new node once it has
    /// handled it: the stream gets its key's entry as it is now, with whatever was saved since it was
    /// announced (`volume` if nothing is saved).
    func volumeArrivesRestoredNow(_ index: UInt32, _ volume: [UInt32]) {
        guard let key = streams[index]?.restoreID else { return }
        if let entry = saved[key] { lateMutes[index] = entry.muted }
        volumeArrives(index, saved[key]?.volume?.values ?? volume)
    }

    // MARK: - Outputs

    /// A sink appears, or a known one changes (its active port, a port's availability: a jack pulled).
    func setSink(_ sink: Sink) {
        let known = sinks[sink.index] != nil
        sinks[sink.index] = sink
        for connection in connections { connection.sinkChanged(sink, added: !known) }
    }

    /// A sink goes away; as PulseAudio ≥ 14 does, the server moves its streams to `rescueTo` itself. A
    /// client hears the removal first and the moved streams' descriptions after it (their change events
    /// come first, but a client fetches each one's description in a round trip).
    func removeSink(_ index: UInt32, rescueTo: UInt32) {
        guard sinks.removeValue(forKey: index) != nil else { return }
        for connection in connections { connection.sinkRemoved(index) }
        for (stream, input) in streams.sorted(by: { $0.key < $1.key }) where input.sinkIndex == index {
            apply(stream, by: nil) { $0.sinkIndex = rescueTo }
        }
    }

    /// A stream is moved to another sink (the user, in pavucontrol).
    func moveStream(_ index: UInt32, to sink: UInt32) {
        apply(index, by: nil) { $0.sinkIndex = sink }
    }

    func removeStream(_ index: UInt32) {
        guard streams.removeValue(forKey: index) != nil else { return }
        for connection in connections { connection.removed(index) }
    }

    /// The server goes away: every connection fails, every stream is gone; the saved table stays.
    func goAway() {
        isUp = false
        streams = [:]
        for connection in connections { connection.serverWentAway() }
        connections = []
    }

    /// The server is back (the daemon's next connect gets through). Streams are added afresh. With
    /// `indexesAgain`, as a real server's, its sink-input indexes start again from 1.
    func comeBack(indexesAgain: Bool = false) {
        isUp = true
        cookie = UInt32.random(in: 1...UInt32.max)
        if indexesAgain { nextIndex = 1 }
    }

    /// The daemon dies (killed, never stopped): its connection hears nothing more.
    func dropConnections() { connections = [] }

    /// While set, the server answers no drain (``StreamServer/drain(_:)``): every write sent before one
    /// may still be lost, as for a daemon killed before the server's answer reached it.
    var answersHeld = false
    /// While set, the server takes saved-entry writes (a repair) but answers none of them: the daemon
    /// keeps the journal entry a repair undoes, as one killed before the answer reached it does.
    var savedEntryAnswersHeld = false

    // MARK: - For the connections

    fileprivate func write(_ write: Write, from connection: FakeServerConnection) {
        writes.append(write)
        onWrite(write)
        switch write {
        case let .volume(index, volume): apply(index, by: connection) { $0.volume = volume }
        case let .mute(index, muted):
            muteSaved.insert(index)
            apply(index, by: connection) { $0.muted = muted }
        case let .saved(name, volume, muted):
            if !savesMuteWithEveryChange, overtakingNextWrite[name] != nil {
                overtakingAnnounced[name] = MainLoop.monotonicMicroseconds()
            }
            saved[name] = StreamRestoreEntry(name: name, volume: volume, muted: muted, device: saved[name]?.device)
        }
    }

    private func apply(_ index: UInt32, by writer: FakeServerConnection?, _ change: (inout SinkInput) -> Void) {
        guard var input = streams[index] else { return }
        change(&input)
        streams[index] = input
        // module-stream-restore saves what clients set, for the stream's key.
        if let key = input.restoreID {
            let savesMute = savesMuteWithEveryChange || muteSaved.contains(index)
            let muted = savesMute ? input.muted : saved[key]?.muted ?? false
            saved[key] = StreamRestoreEntry(name: key, volume: input.volume, muted: muted, device: saved[key]?.device)
        }
        let overtaken = writer == nil && overtaken.contains(index)
        for connection in connections { connection.changed(input, by: writer, overtaken: overtaken) }
    }
}

/// One client's connection to a ``FakeSoundServer``: what a ``PulseConnection`` would deliver.
final class FakeServerConnection: StreamServer, SavedLevels {
    var savedLevels: (any SavedLevels)? { self }
    var savesMuteWithEveryChange: Bool { server.savesMuteWithEveryChange }
    var serverCookie: UInt32? { server.cookie }
    private(set) var savedAtStart: [StreamRestoreEntry]?
    /// A pulse server, as the daemon sees it.
    var instance: ServerInstance { ServerInstance(backend: .pulse, number: server.cookie) }
    var onNews: (ServerNews) -> Void = { _ in }

    private(set) var state: PulseConnection.State = .unconnected
    var isReady: Bool { state == .ready }
    private(set) var serverDescription: String?

    private unowned let server: FakeSoundServer
    /// Deliveries waiting for the loop's next turn, in order.
    private var pending: [() -> Void] = []
    private var deliveryTimer: MainLoop.Timer?
    /// What this connection last told of each stream, to tell changes apart as libpulse's tracker does.
    private var told: [UInt32: SinkInput] = [:]
    private var snapshotTold = false

    init(server: FakeSoundServer, loop: MainLoop) {
        self.server = server
        deliveryTimer = MainLoop.Timer(loop: loop) { [weak self] in self?.deliver() }
    }

    func connect() {
        state = .connecting
        onNews(.state(.connecting))
        post { [self] in
            guard server.isUp else {
                state = .failed("Connection refused")
                return onNews(.state(state))
            }
            serverDescription = "fake sound server 1.0"
            state = .ready
            onNews(.state(.ready))
            let inputs = server.streams.values.sorted { $0.index < $1.index }
            for input in inputs { told[input.index] = input }
            snapshotTold = true
            savedAtStart = server.saved.values.sorted { $0.name < $1.name }
            onNews(.initialStreams(inputs))
            onNews(.initialCaptures([]))
            for sink in server.sinks.values.sorted(by: { $0.index < $1.index }) { onNews(.sinkAdded(sink)) }
        }
    }

    func drain(_ completion: @escaping () -> Void) {
        guard isReady else { return completion() }
        post { [weak self] in
            guard self?.server.answersHeld == false else { return }
            completion()
        }
    }

    /// As the pulse backend writes a gain: the own level's volume scaled by it.
    func setGain(_ stream: StreamID, own: ChannelVolumes, factor: Double) {
        guard let index = playbackIndex(of: stream) else { return onNews(.error("set volume of \(stream): another instance's")) }
        guard isReady else { return onNews(.error("set volume of sink input \(index): not connected")) }
        server.write(.volume(index, own.atGain(factor)), from: self)
    }

    func setMute(_ stream: StreamID, muted: Bool) {
        guard let index = playbackIndex(of: stream) else { return onNews(.error("set mute of \(stream): another instance's")) }
        guard isReady else { return onNews(.error("set mute of sink input \(index): not connected")) }
        server.write(.mute(index, muted), from: self)
    }

    func readSavedEntries(completion: @escaping ([StreamRestoreEntry]?) -> Void) {
        guard isReady else { return completion(nil) }
        let entries = server.saved.values.sorted { $0.name < $1.name }
        post { completion(entries) }
    }

    func writeSavedEntry(name: String, volume: ChannelVolumes, muted: Bool, device: String?,
                         completion: ((Bool) -> Void)?) {
        guard isReady else {
            onNews(.error("write stream-restore entry \(name): not connected"))
            completion?(false)
            return
        }
        let before = server.saved[name]
        server.write(.saved(name, volume, muted: muted), from: self)
        post { [self] in
            guard !server.savedEntryAnswersHeld else { return }
            completion?(true)
            server.savedEntryAnswered(name, before: before)
        }
    }

    /// No meters: the engine takes what it would measure as audible.
    func meter(_ stream: StreamID, sink: UInt32, onPeak: @escaping (Float) -> Void) -> (any StreamMeter)? { nil }

    // MARK: - From the server

    fileprivate func added(_ input: SinkInput) {
        guard snapshotTold else { return }
        post { [self] in
            told[input.index] = input
            onNews(.streamAdded(input))
        }
    }

    fileprivate func changed(_ input: SinkInput, by writer: FakeServerConnection?, overtaken: Bool = false) {
        guard snapshotTold else { return }
        post { [self] in
            guard let before = told[input.index] else { return }
            var delivered = input
            let volumeChanged = !input.volume.matches(before.volume), muteChanged = input.muted != before.muted
            if before.volumePending, !input.volumePending {
                // The server's restored volume, late: nobody changed it (as PulseConnection tells it).
                delivered.levelChange = .none
            } else if writer === self {
                delivered.levelChange = volumeChanged || muteChanged ? .ours : .none
            } else if volumeChanged || muteChanged {
                delivered.levelChange = .theirs
                delivered.theirVolume = volumeChanged
                delivered.theirMute = muteChanged
                delivered.theirVolumeOvertaken = volumeChanged && overtaken
            }
            told[input.index] = input
            guard !before.sameState(as: input) || delivered.levelChange != .none else { return }
            onNews(.streamChanged(delivered))
        }
    }

    fileprivate func sinkChanged(_ sink: Sink, added: Bool) {
        guard snapshotTold else { return }
        post { [self] in added ? onNews(.sinkAdded(sink)) : onNews(.sinkChanged(sink)) }
    }

    fileprivate func sinkRemoved(_ index: UInt32) {
        guard snapshotTold else { return }
        post { [self] in onNews(.sinkRemoved(index)) }
    }

    fileprivate func removed(_ index: UInt32) {
        guard snapshotTold else { return }
        post { [self] in
            guard told.removeValue(forKey: index) != nil else { return }
            onNews(.streamRemoved(index))
        }
    }

    fileprivate func serverWentAway() {
        pending = []
        told = [:]
        snapshotTold = false
        let reason = "Connection terminated"
        post { [self] in
            state = .failed(reason)
            onNews(.state(state))
        }
    }

    // MARK: - Delivery on the loop

    private func post(_ delivery: @escaping () -> Void) {
        pending.append(delivery)
        deliveryTimer?.schedule(after: 0)
    }

    private func deliver() {
        while !pending.isEmpty {
            let next = pending.removeFirst()
            next()
        }
    }
}
