import AudioPolicy
import EventLoop
import Foundation
@testable import PulseBackend
import SoundBackend
import TestRequirements
import Testing

// Runs against a real sound server named by PULSE_SERVER, e.g.
//
//   eval "$(scripts/sound-server start pulseaudio /tmp/pa1)"
//   swift test --filter PulseConnectionTests
//   scripts/sound-server stop /tmp/pa1
//
// Without one, the suite reports itself skipped.

private let soundServer = ProcessInfo.processInfo.environment["PULSE_SERVER"]
private let musicKey = "sink-input-by-media-role:music"

@Suite(
    .serialized,
    .needs(TestEnvironment.soundServerMissing)
)
final class PulseConnectionTests {
    let loop = MainLoop()
    let pulse: PulseConnection
    var initial: [SinkInput]?
    var added: [SinkInput] = []
    var changed: [SinkInput] = []
    /// When the server's announcement of each new sink input entered the process, and when the answer
    /// describing it arrived (monotonic µs).
    var timed: [UInt32: (announced: UInt64, described: UInt64)] = [:]
    var removed: [UInt32] = []
    var errors: [String] = []
    var state: PulseConnection.State = .unconnected
    var players: [Process] = []
    let tone: URL

    init() throws {
        pulse = PulseConnection(loop: loop, applicationName: "audio-policyd tests")
        tone = FileManager.default.temporaryDirectory
            .appendingPathComponent("audio-policyd-tone-\(getpid()).wav")
        // Long enough to outlive each test; the tests stop it themselves.
        try run("sox", "-n", "-r", "48000", "-c", "2", tone.path, "synth", "30", "sine", "440", "vol", "0.5")
        pulse.onStreamTimed = { [unowned self] index, announced, described in timed[index] = (announced, described) }
        pulse.onNews = { [unowned self] news in
            switch news {
            case let .state(new): state = new
            case let .initialStreams(list): initial = list
            case let .streamAdded(input): added.append(input)
            case let .streamChanged(input): changed.append(input)
            case let .streamRemoved(index): removed.append(index)
            case let .error(message): errors.append(message)
            default: break
            }
        }
    }

    deinit {
        for player in players where player.isRunning {
            end(player)
        }
        try? FileManager.default.removeItem(at: tone)
    }

    // MARK: - Tests

    @Test func connectsAndDeliversTheInitialSnapshot() throws {
        try connect()
        #expect(pulse.serverDescription != nil)
        #expect(initial != nil)
        #expect(errors.isEmpty, "\(errors)")
    }

    @Test func announcesAStreamWithItsClientsProperties() throws {
        try connect()
        try resetSavedMusicVolume()
        let before = MainLoop.monotonicMicroseconds()
        try play(role: "music")
        // As announced: at once, with its volume still pending on pipewire-pulse.
        let stream = try awaitAdded(pendingVolume: true)
        #expect(stream.role == "music")
        #expect(stream.applicationName == "paplay")
        // paplay is a symlink to pacat, and libpulse names the binary it runs.
        #expect(stream.processBinary == "pacat")
        #expect(stream.restoreID == musicKey)
        #expect(stream.volume.channels == 2)
        #expect(stream.volume.channelMap.count == 2)
        let times = try #require(timed[stream.index], "a stream announced while connected is timed")
        let announcedAt = times.announced
        #expect(announcedAt >= before)
        #expect(times.described >= announcedAt)
        #expect(pulse.lastEventReceivedAt.map { $0 >= announcedAt } == true)
        print("sink input properties (\(pulse.serverDescription ?? "?")):")
        for key in stream.properties.keys.sorted() { print("  \(key) = \(stream.properties[key] ?? "")") }
    }

    @Test func tellsOurVolumeChangesFromTheUsers() throws {
        try connect()
        try resetSavedMusicVolume()
        try play(role: "music")
        let stream = try awaitAdded()

        let thirty = ChannelVolumes(uniform: ChannelVolumes.norm * 30 / 100, channels: 2)
        pulse.setVolume(index: stream.index, volumes: thirty)
        let echo = try awaitChange(of: stream.index) { $0.volume.matches(thirty) }
        #expect(echo.isEcho)
        #expect(echo.levelChange == .ours)

        try run("pactl", "set-sink-input-volume", String(stream.index), "50%")
        let user = try awaitChange(of: stream.index) { !$0.volume.matches(thirty) }
        #expect(!user.isEcho)
        #expect(user.levelChange == .theirs)
        #expect(user.volume.matches(ChannelVolumes(uniform: ChannelVolumes.norm / 2, channels: 2)))

        pulse.setMute(index: stream.index, muted: true)
        let muted = try awaitChange(of: stream.index) { $0.muted }
        #expect(muted.isEcho)

        try run("pactl", "set-sink-input-mute", String(stream.index), "0")
        let unmuted = try awaitChange(of: stream.index) { !$0.muted }
        #expect(unmuted.levelChange == .theirs)
        #expect(errors.isEmpty, "\(errors)")
    }

    /// A mute and its undoing, both answered (and the unmuted state delivered, when the mute's echo was
    /// seen before it): a mute a moment later is someone
    /// else's, not the echo of the first (the PipeWire churn on CI, seed 20261123). Control: the same
    /// mute, sent by us, is ours.
    @Test("after our mute and unmute are answered, a mute is the user's; the same mute sent by us is ours")
    func aMuteAfterOurAnsweredMuteAndUnmuteIsTheUsers() throws {
        try connect()
        try resetSavedMusicVolume()
        try play(role: "music")
        let stream = try awaitAdded()
        for user in [true, false] {
            pulse.setMute(index: stream.index, muted: true)
            pulse.setMute(index: stream.index, muted: false)
            var drained = false
            pulse.drain { drained = true }
            try #require(runLoop(until: { drained }))
            // Answered is not yet heard of: pipewire-pulse may tell the unmute's change after its answer.
            // The mute a moment later must follow a delivered unmuted state, else it is no change at all.
            let delivered = { [unowned self] in changed.last { $0.index == stream.index } ?? stream }
            try #require(runLoop(until: { !delivered().muted }), "the unmute was never delivered")
            if user {
                try run("pactl", "set-sink-input-mute", String(stream.index), "1")
            } else {
                pulse.setMute(index: stream.index, muted: true)
            }
            let muted = try awaitChange(of: stream.index) { $0.muted }
            #expect(muted.levelChange == (user ? .theirs : .ours), "user: \(user)")
            #expect(muted.theirMute == user, "user: \(user)")
            try run("pactl", "set-sink-input-mute", String(stream.index), "0")
            _ = try awaitChange(of: stream.index) { !$0.muted }
        }
        #expect(errors.isEmpty, "\(errors)")
    }

    /// pipewire-pulse answers a mute after a round trip sent later (its `operation_new` waits for a sync
    /// with PipeWire); PulseAudio answers in order. A drain waits for both. Control: the bare round trip,
    /// which on pipewire-pulse comes back with the mute still out.
    @Test("a drain comes back once the writes before it are answered; a bare round trip, on pipewire-pulse, before")
    func aDrainWaitsForTheWritesSentBeforeIt() throws {
        try connect()
        try resetSavedMusicVolume()
        try play(role: "music")
        let stream = try awaitAdded()
        let context = try #require(pulse.context)
        var outAfterRoundTrip: [Int] = []
        var outAfterDrain: [Int] = []
        for round in 0..<6 {
            pulse.setMute(index: stream.index, muted: round % 2 == 0)
            var trips = 0
            pulse.roundTrip(context) { [unowned self] in
                outAfterRoundTrip.append(pulse.pendingAnswers.count)
                trips += 1
            }
            pulse.drain { [unowned self] in
                outAfterDrain.append(pulse.pendingAnswers.count)
                trips += 1
            }
            try #require(runLoop(until: { trips == 2 }))
        }
        #expect(outAfterDrain == Array(repeating: 0, count: 6))
        if isPipeWire {
            #expect(outAfterRoundTrip.contains { $0 > 0 }, "\(outAfterRoundTrip)")
        } else {
            #expect(outAfterRoundTrip == Array(repeating: 0, count: 6))
        }
        #expect(errors.isEmpty, "\(errors)")
    }

    /// A restarted server numbers its sink inputs from the start again: a write meant for a stream of the
    /// instance before names another app's stream now. The seam's writes name the instance, and the
    /// connection refuses one of another.
    @Test("a gain or mute for a sink input's index on another server instance never reaches the server (an error instead); control: the same index on this instance is written")
    func writesOfAnotherInstanceAreRefused() throws {
        try connect()
        try resetSavedMusicVolume()
        try play(role: "music")
        let stream = try awaitAdded()
        var other = pulse.instance
        other.number &+= 1
        let stale = StreamID.playback(stream.index, on: other)
        pulse.setMute(stale, muted: true)
        pulse.setGain(stale, own: stream.volume, factor: 0.5)
        #expect(errors.count == 2 && errors.allSatisfy { $0.contains("not a sink input of this server instance") },
                "\(errors)")

        // Sent after them: the server answers in order, so its state then shows whether they reached it.
        let thirty = ChannelVolumes(uniform: ChannelVolumes.norm * 30 / 100, channels: 2)
        pulse.setGain(pulse.playbackID(stream.index), own: thirty, factor: 1)
        let written = try awaitChange(of: stream.index) { $0.volume.matches(thirty) }
        #expect(!written.muted, "the other instance's mute reached the server")
        pulse.setMute(pulse.playbackID(stream.index), muted: true)
        let muted = try awaitChange(of: stream.index) { $0.muted }
        #expect(muted.levelChange == .ours && muted.volume.matches(thirty))
        #expect(errors.count == 2, "\(errors)")
    }

    @Test func scaledVolumesSurviveTheRoundTrip() throws {
        try connect()
        try resetSavedMusicVolume()
        try play(role: "music")
        let stream = try awaitAdded()
        let full = ChannelVolumes(uniform: ChannelVolumes.norm, channels: 2)
        // A duck ramp's worth of writes; every echo must be recognised.
        for step in 1...10 {
            pulse.setVolume(index: stream.index, volumes: full.scaled(by: 1 - Double(step) * 0.08))
        }
        let last = full.scaled(by: 0.2)
        let settled = try awaitChange(of: stream.index) { $0.volume.matches(last) }
        #expect(settled.isEcho)
        // Only level changes count: pipewire-pulse may also report the stream corked meanwhile.
        let theirs = changed.filter { $0.index == stream.index && $0.levelChange == .theirs }
        #expect(theirs.isEmpty, "\(theirs.map(\.volume))")
        #expect(abs(settled.volume.averageLinear - 0.2) < 0.001)
    }

    /// The key product fact: a volume left on a stream is saved for the next
    /// stream of the same role, and writing the entry back repairs it.
    @Test func streamRestoreSavesADuckAndWritingTheEntryRepairsIt() throws {
        try connect()
        try resetSavedMusicVolume()
        let first = try play(role: "music")
        var stream = try awaitAdded()
        let full = ChannelVolumes(uniform: ChannelVolumes.norm, channels: 2)
        if !stream.volume.matches(full) {
            pulse.setVolume(index: stream.index, volumes: full)
            _ = try awaitChange(of: stream.index) { $0.volume.matches(full) }
        }
        let twenty = ChannelVolumes(uniform: ChannelVolumes.norm * 20 / 100, channels: 2)
        pulse.setVolume(index: stream.index, volumes: twenty)
        _ = try awaitChange(of: stream.index) { $0.volume.matches(twenty) }
        letWirePlumberSave()
        try stop(first, index: stream.index)

        // Saved: the next music stream starts at 20 %.
        let second = try play(role: "music")
        stream = try awaitAdded()
        #expect(stream.volume.matches(twenty, tolerance: 2), "second stream starts at \(stream.volume)")

        // PulseAudio reads back every saved entry. pipewire-pulse reads only
        // what is in PipeWire's "route-settings" metadata: what clients wrote
        // there since PipeWire started (WirePlumber 0.4 adds only the
        // Notification role); so it shows our last write, not the 20 %.
        let saved = try readEntry(musicKey)
        if !isPipeWire {
            #expect(saved?.volume?.matches(twenty, tolerance: 2) == true, "saved entry: \(String(describing: saved))")
        }
        try stop(second, index: stream.index)

        // Repair once the stream is gone, as the daemon does (while it plays,
        // WirePlumber may save the stream's volume over the repair), keeping
        // the entry's device and the stream's channel map.
        var repaired = stream.volume
        repaired.values = repaired.values.map { _ in ChannelVolumes.norm }
        pulse.writeSavedEntry(name: musicKey, volume: repaired, muted: false, device: saved?.device)
        let reread = try #require(try readEntry(musicKey), "the entry just written reads back")
        #expect(reread.volume?.matches(full) == true, "\(reread)")
        #expect(reread.volume?.channelMap == stream.volume.channelMap)
        #expect(reread.device == saved?.device)

        let third = try play(role: "music")
        stream = try awaitAdded()
        #expect(stream.volume.matches(full), "after the repair the next stream starts at \(stream.volume)")
        try stop(third, index: stream.index)
        #expect(errors.isEmpty, "\(errors)")
    }

    /// pipewire-pulse announces a stream before its volume is known; the
    /// connection announces it at once with its volume pending, and the
    /// restored volume follows as a change that is nobody's.
    @Test func announcesANewStreamWithItsRestoredVolume() throws {
        try connect()
        try resetSavedMusicVolume()
        let first = try play(role: "music")
        var stream = try awaitAdded()
        let forty = ChannelVolumes(uniform: ChannelVolumes.norm * 40 / 100, channels: 2)
        pulse.setVolume(index: stream.index, volumes: forty)
        _ = try awaitChange(of: stream.index) { $0.volume.matches(forty) }
        letWirePlumberSave()
        try stop(first, index: stream.index)

        changed.removeAll()
        let second = try play(role: "music")
        stream = try awaitAdded(pendingVolume: true)
        let announcedAt = try #require(timed[stream.index]?.announced)
        print("announced after \(MainLoop.monotonicMicroseconds() - announcedAt) µs (\(serverName))")
        if stream.volumePending {
            #expect(isPipeWire, "only pipewire-pulse announces a stream before its volume")
            let index = stream.index
            let known = try changed.last { $0.index == index && !$0.volumePending }
                ?? awaitChange(of: index) { !$0.volumePending }
            #expect(known.levelChange == .none, "the restored volume was taken for \(known.levelChange)")
            stream = known
        }
        #expect(stream.volume.matches(forty, tolerance: 2), "its volume is \(stream.volume)")
        // No later change may pass the restored volume off as the user's.
        _ = runLoop(until: { false }, timeout: 200_000)
        let theirs = changed.filter { $0.index == stream.index && $0.levelChange == .theirs }
        #expect(theirs.isEmpty, "\(theirs.map(\.volume))")
        try stop(second, index: stream.index)
    }

    /// A repair counts as done only once the server has taken it (a write sent as the server goes away
    /// is lost, and the daemon keeps its journal entry for the next connection).
    @Test func aSavedEntryWriteTellsWhetherTheServerTookIt() throws {
        try connect()
        var taken: [Bool] = []
        pulse.writeSavedEntry(name: "sink-input-by-application-name:audio-policyd-ack-test",
                              volume: ChannelVolumes(values: [40000, 30000]), muted: false, device: nil) { taken.append($0) }
        #expect(runLoop(until: { !taken.isEmpty }))
        #expect(taken == [true])
        pulse.disconnect()
        pulse.writeSavedEntry(name: "sink-input-by-application-name:audio-policyd-ack-test",
                              volume: ChannelVolumes(values: [40000, 30000]), muted: false, device: nil) { taken.append($0) }
        #expect(taken == [true, false], "not connected: not taken")
    }

    @Test func drainCompletes() throws {
        try connect()
        var drained = false
        pulse.drain { drained = true }
        #expect(runLoop(until: { drained }))
    }

    /// libpulse keeps one drain callback per context: a second drain asked while the first is in flight
    /// must not orphan it (recovery's drain, taken over by a stream's, never completed).
    @Test("two drains in flight, each after a request, both complete, in the order asked (the single drain above is the control)")
    func twoDrainsInFlightBothComplete() throws {
        try connect()
        var done: [Int] = []
        var read = 0
        // A request pending before each: with nothing pending a drain completes at once.
        pulse.readSavedEntries { _ in read += 1 }
        pulse.drain { done.append(1) }
        pulse.readSavedEntries { _ in read += 1 }
        pulse.drain { done.append(2) }
        #expect(runLoop(until: { done.count == 2 }), "completed: \(done)")
        #expect(done == [1, 2])
        #expect(read == 2, "a drain completed before the requests sent before it were answered")
    }

    // MARK: - Helpers

    private var serverName: String { pulse.serverDescription ?? "?" }
    private var isPipeWire: Bool { serverName.contains("PipeWire") }

    private func connect() throws {
        pulse.connect()
        try #require(runLoop(until: { self.initial != nil || { if case .failed = self.state { true } else { false } }() }))
        try #require(state == .ready, "connection: \(state)")
    }

    /// Runs the loop until `condition` holds; false when `timeout` (µs) passed first.
    private func runLoop(until condition: () -> Bool, timeout: UInt64 = 5_000_000) -> Bool {
        var expired = false
        let deadline = MainLoop.Timer(loop: loop) { expired = true }
        deadline.schedule(after: timeout)
        while !condition(), !expired {
            guard loop.iterate() else { return false }
        }
        return condition()
    }

    /// The next stream announced; unless `pendingVolume`, as it is once its volume is known (pipewire-pulse
    /// announces a new stream before it knows its volume).
    private func awaitAdded(pendingVolume: Bool = false, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws
        -> SinkInput {
        let count = added.count
        try #require(runLoop(until: { self.added.count > count }), "no stream announced", sourceLocation: sourceLocation)
        let stream = added[count]
        guard stream.volumePending, !pendingVolume else { return stream }
        let index = stream.index
        return try changed.last { $0.index == index && !$0.volumePending }
            ?? awaitChange(of: index, sourceLocation: sourceLocation) { !$0.volumePending }
    }

    private func awaitChange(
        of index: UInt32, sourceLocation: Testing.SourceLocation = #_sourceLocation,
        where matches: @escaping (SinkInput) -> Bool
    ) throws -> SinkInput {
        var seen = changed.count
        var found: SinkInput?
        let arrived = runLoop(until: {
            while found == nil, seen < self.changed.count {
                if self.changed[seen].index == index, matches(self.changed[seen]) { found = self.changed[seen] }
                seen += 1
            }
            return found != nil
        })
        try #require(arrived, "no matching change of sink input \(index)", sourceLocation: sourceLocation)
        return try #require(found)
    }

    /// WirePlumber saves a stream's volume in its own process, after the
    /// change; a stream killed within milliseconds of a change may end
    /// before that, and then nothing is saved. Nothing on the pulse protocol
    /// tells when it is done, so give it a moment.
    private func letWirePlumberSave() {
        guard isPipeWire else { return }
        _ = runLoop(until: { false }, timeout: 200_000)
    }

    /// Saves 100 % for the music role, so a test's first stream starts there
    /// whatever earlier tests left behind.
    private func resetSavedMusicVolume() throws {
        pulse.writeSavedEntry(
            name: musicKey, volume: ChannelVolumes(uniform: ChannelVolumes.norm, channels: 2), muted: false,
            device: nil)
        // Answered after the write: the server has taken it.
        _ = try readEntry(musicKey)
    }

    private func readEntry(_ name: String) throws -> StreamRestoreEntry? {
        var result: StreamRestoreEntry??
        pulse.readSavedEntry(name: name) { result = .some($0) }
        try #require(runLoop(until: { result != nil }), "stream-restore read did not complete")
        return result ?? nil
    }

    @discardableResult
    private func play(role: String) throws -> Process {
        let player = Process()
        player.executableURL = URL(fileURLWithPath: "/usr/bin/paplay")
        player.arguments = ["--property=media.role=\(role)", tone.path]
        try player.run()
        players.append(player)
        return player
    }

    private func stop(_ player: Process, index: UInt32) throws {
        end(player)
        try #require(runLoop(until: { self.removed.contains(index) }), "sink input \(index) not removed")
    }

    /// Ends a player at once. SIGKILL because the test runner's threads
    /// block SIGTERM and spawned players inherit that mask; for the server
    /// the stream simply goes away, as when an app quits.
    private func end(_ player: Process) {
        kill(player.processIdentifier, SIGKILL)
        player.waitUntilExit()
    }

    private func run(_ arguments: String...) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "\(arguments.joined(separator: " ")) failed")
    }
}
