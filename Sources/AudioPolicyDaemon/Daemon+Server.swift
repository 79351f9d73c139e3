import AudioPolicy
import EventLoop
import FoundationEssentials
import Glibc
import Logging
import SessionBus
import SoundServer

/// The sound server side: connecting, reconnecting, and turning sink-input news into engine events.
extension Daemon {
    static func streamID(_ index: UInt32) -> StreamID { StreamID(String(index)) }

    func connect() {
        let pulse = makeServer(loop)
        pulse.onStateChange = { [unowned self] state in self.serverStateChanged(state) }
        pulse.onInitialStreams = { [unowned self] inputs in self.reconcile(with: inputs) }
        pulse.onStreamAdded = { [unowned self] input in self.streamAdded(input) }
        pulse.onStreamChanged = { [unowned self] input in self.streamChanged(input) }
        pulse.onStreamRemoved = { [unowned self] index in self.streamRemoved(index) }
        pulse.onInitialCaptures = { [unowned self] captures in captures.forEach(self.captureChanged) }
        pulse.onCaptureAdded = { [unowned self] capture in self.captureChanged(capture) }
        pulse.onCaptureChanged = { [unowned self] capture in self.captureChanged(capture) }
        pulse.onCaptureRemoved = { [unowned self] index in self.captureRemoved(index) }
        pulse.onError = { [unowned self] message in self.log.warning("sound server: \(message)") }
        self.pulse = pulse
        pulse.connect()
    }

    private func serverStateChanged(_ state: PulseConnection.State) {
        switch state {
        case .ready:
            reconnectDelay = 250_000
            serverName = pulse?.serverDescription
            log.info("connected to \(serverName ?? "the sound server")")
        case let .failed(reason):
            log.warning("sound server connection lost: \(reason)")
            serverGone()
        case .terminated:
            serverGone()
        default:
            break
        }
    }

    /// The server went away: its streams went with it. Forget them (nothing can be restored on a
    /// server that is gone; the restore entries are repaired when we are back) and reconnect.
    private func serverGone() {
        pulse = nil
        serverName = nil
        meters.stopAll()
        for index in recordingCaptures.sorted() { captureRemoved(index) }
        for index in streams.keys.sorted() { streamRemoved(index) }
        // Gone with the server: no hold lingers over the streams of the next one.
        execute(engine.forgetEndedStreams(at: now))
        if stopping {
            loop.quit(0)
            return
        }
        let delay = reconnectDelay
        reconnectDelay = min(reconnectDelay * 2, 5_000_000)
        log.info("reconnecting in \(delay / 1000) ms")
        reconnectTimer?.schedule(after: delay)
    }

    /// The first full list after connecting: streams we knew but are gone have ended, new ones start.
    private func reconcile(with server: [SinkInput]) {
        // Daemon+Journal: what an earlier run (or the server that went away) left changed is put back
        // first, so the engine starts from the user's own levels; ready once the server has taken it.
        let inputs = recoverFromJournal(server) { [unowned self] in self.becameReady() }
        let present = Set(inputs.map(\.index))
        for index in streams.keys.sorted() where !present.contains(index) { streamRemoved(index) }
        for input in inputs.sorted(by: { $0.index < $1.index }) {
            if streams[input.index] == nil { streamAdded(input) } else { streamChanged(input) }
        }
    }

    func streamAdded(_ input: SinkInput) {
        guard streams[input.index] == nil else { return streamChanged(input) }
        streams[input.index] = LiveStream(input)
        let id = Self.streamID(input.index)
        let ownBefore = streams[input.index]?.ownVolume
        let mutedByUs = adoptSavedOrigin(input.index)
        let adopted = mutedByUs || streams[input.index]?.ownVolume != ownBefore
        feed(.streamStarted(id, input.properties, player: playerForNewStream(input)))
        if adopted { correctSavedStart(input.index, mutedByUs: mutedByUs) }
        if let announced = input.announcedAt, recordReactionTimes {
            reactionTimes.append(ReactionTime(announced: announced, described: input.describedAt ?? announced,
                                              acted: MainLoop.monotonicMicroseconds()))
        }
        if input.corked {
            feed(.playback(id, playing: false))
        } else if let player = media.streamPlayers[input.index],
                  media.players?.player(named: player.rawValue)?.status == .playing {
            // Its player already says Playing (a new track's stream): the engine hears it, and the app
            // owns Now Playing at once.
            feed(.playback(id, playing: true))
        }
        prepareJournalEntry(input.index)
    }

    func streamChanged(_ input: SinkInput) {
        guard var live = streams[input.index] else { return streamAdded(input) }
        defer { prepareJournalEntry(input.index) }
        let old = live.input
        live.input = input
        let id = Self.streamID(input.index)
        if input.levelChange == .theirs, input.theirVolume {
            // Someone else (the user, a mixer) set the volume: that is the stream's own volume now.
            live.ownVolume = input.volume
        }
        streams[input.index] = live
        if old.volumePending, !input.volumePending { volumeArrived(input.index) }
        if input.properties != old.properties { feed(.streamChanged(id, input.properties)) }
        if input.corked != old.corked { feed(.playback(id, playing: !input.corked)) }
        guard input.levelChange == .theirs else { return }
        if input.theirVolume { feed(.userVolume(id, input.volume.averageLinear)) }
        if input.theirMute {
            // Muted or unmuted by someone else: the mute is theirs either way, never the policy's to undo.
            streams[input.index]?.policyMuted = false
            feed(.userMute(id, input.muted))
        }
        journalSync(input.index)
    }

    /// How long after our last write to a stream its end still gets a repair of its saved entry (µs):
    /// the write's answer takes milliseconds; a second covers a busy server.
    static let lateWriteWindow: UInt64 = 1_000_000

    func streamRemoved(_ index: UInt32) {
        guard streams[index] != nil else { return }
        meters.stop(index)
        feed(.streamEnded(Self.streamID(index)))
        // The last step of a restore or fade-in, sent a moment before the stream ended, may never have
        // been applied: the server then keeps the step before it as the saved level, and neither the
        // engine nor the journal (both count the ramp done) would repair it (found by the soak).
        if let live = streams[index], journal[index] == nil, !journalRepairs.contains(index),
           let written = live.lastWriteAt, MainLoop.monotonicMicroseconds() &- written < Self.lateWriteWindow {
            repairSavedEntry(of: live)
        }
        streamForgotten(index, input: streams[index]?.input)
        ramps.cancel(index)
        streams[index] = nil
        journalStreamGone(index)
        journal.store?.forget(index)
    }
}
