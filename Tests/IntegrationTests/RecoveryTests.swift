import AudioPolicy
import AudioPolicyDaemon
import Foundation
import Testing
import TestRequirements

// Crash recovery and surviving the sound server, on real components: the built daemon, the test
// server (scripts/sound-server; PulseAudio or PipeWire), real players. The daemon is killed with
// SIGKILL (nothing of its own runs), started again on the same XDG_RUNTIME_DIR and XDG_STATE_HOME (a
// crash in the same session), or on the same XDG_STATE_HOME alone (a new session), and what the
// server reports is checked against what the user had.
//
//   eval "$(scripts/sound-server start pulseaudio /tmp/sv-pa)"
//   AUDIO_POLICYD_BIN=$PWD/.build/debug/audio-policyd swift test --no-parallel --filter 'Service|Recovery'
//   scripts/sound-server stop /tmp/sv-pa

@Suite(
    "Recovery: after a crash, and when the sound server restarts",
    .serialized,
    .needs(TestEnvironment.soundServerMissing)
)
final class RecoveryTests {
    let session: LiveSession
    let stateHome: URL
    let runtime: URL

    init() throws {
        session = try LiveSession()
        stateHome = try TestEnvironment.temporaryFolder("audio-policyd-state")
        runtime = try TestEnvironment.temporaryFolder("audio-policyd-runtime")
    }

    deinit {
        session.stopAll()
        try? FileManager.default.removeItem(at: stateHome)
        try? FileManager.default.removeItem(at: runtime)
    }

    /// The journal's log, and its durable copy.
    var journal: String { journalPath(in: runtime) }
    var durable: String { journalPath(in: stateHome) }

    func startDaemon() throws -> DaemonProcess {
        try session.startDaemon(stateHome: stateHome, runtime: runtime)
    }

    /// Both the log and the durable copy hold nothing to restore.
    func awaitJournalEmpty() throws {
        try session.awaitJournalEmpty(journal)
        try session.awaitJournalEmpty(durable)
    }

    @Test("killed -9 while interrupting, then the interruption ends: the next start restores the music exactly",
          arguments: Interruption.allCases)
    func killedWhileInterruptingThenRestarted(_ interruption: Interruption) throws {
        let (music, own) = try session.startMusic()
        let first = try startDaemon()
        let interrupter = try session.play(interruption.tone, role: interruption.role, name: "\(interruption.role)-app")
        try session.awaitInterrupted(music, own: own, by: interruption)
        // On record before the change reached the server, with the user's own volume.
        let entries = try Self.entries(in: journal)
        let entry = try #require(entries.first { $0.sinkInput == music.index }, "journal: \(entries)")
        #expect(entry.volume == own.raw && entry.muted == false && entry.policyMuted == (interruption == .mute))

        first.kill()
        let left = try music.stream()
        switch interruption {
        case .duck: #expect(!DaemonTests.matches(left.volume, own), "the crash left nothing to restore: \(left)")
        case .mute: #expect(left.muted, "the crash left nothing to restore: \(left)")
        }
        interrupter.stop()
        try session.events.awaitRemoval(of: try #require(interrupter.index))

        let second = try startDaemon()
        try session.awaitRestored(music, to: own)
        try second.awaitLog("journal: recovery done")
        try awaitJournalEmpty()
        #expect(second.log.contains { $0.contains("an earlier run left 1 stream(s) changed") }, "\(second.logText)")
        #expect(second.problems.isEmpty, "\(second.problems)")
        // Restored for good: nothing ramps it anywhere else afterwards.
        try session.changes.watch(for: 0.5) {
            let now = try music.stream()
            #expect(DaemonTests.matches(now.volume, own) && !now.muted, "\(now)")
        }
    }

    @Test("killed -9 while holding the music of a lost headset muted: the next start keeps it muted, at the user's level, until the user's volume change unmutes it (control: the call's mute above is undone)")
    func killedWhileHoldingALostHeadsetsMusic() throws {
        let (music, own) = try holdLostHeadsetsMusicAndKill()
        let second = try startDaemon()
        try second.awaitLog("journal: recovery done")
        #expect(second.log.contains { $0.contains("kept muted (its output went away") }, "\(second.logText)")
        // Muted on the speakers, its volume the user's again under the mute, and it stays so.
        try session.awaitStream(music, "muted at the user's level") { $0.muted && DaemonTests.matches($0.volume, own) }
        try session.changes.watch(for: 1) {
            let now = try music.stream()
            #expect(now.muted, "unmuted on the speakers: \(now)")
        }
        // The user acts: a volume change unmutes it, at that volume.
        let chosen = try music.setVolume(percent: [60, 60])
        try session.awaitStream(music, "unmuted at the user's new level") { !$0.muted && DaemonTests.matches($0.volume, chosen) }
        try awaitJournalEmpty()
        #expect(second.problems.isEmpty, "\(second.problems)")
    }

    @Test("killed -9 while holding the music of a lost headset muted, and the user turns it up while no daemon runs: the next start unmutes it at that level (control: the test above, untouched, stays muted)")
    func userActsOnAHeldStreamWhileNoDaemonRuns() throws {
        let (music, _) = try holdLostHeadsetsMusicAndKill()
        let chosen = try music.setVolume(percent: [70, 55])
        try session.awaitStream(music, "at the user's level, still muted") { $0.muted && DaemonTests.matches($0.volume, chosen) }
        let second = try startDaemon()
        try second.awaitLog("journal: recovery done")
        #expect(!second.log.contains { $0.contains("kept muted (its output went away") }, "\(second.logText)")
        try session.awaitStream(music, "unmuted at the level the user chose") { !$0.muted && DaemonTests.matches($0.volume, chosen) }
        try session.changes.watch(for: 1) {
            let now = try music.stream()
            #expect(!now.muted && DaemonTests.matches(now.volume, chosen), "not the user's: \(now)")
        }
        try awaitJournalEmpty()
        #expect(second.problems.isEmpty, "\(second.problems)")
    }

    /// Plays the music on a headset under a first daemon, takes the headset away (no player: the music is
    /// held muted, journaled so), and kills the daemon. Returns the music and its user's level.
    func holdLostHeadsetsMusicAndKill() throws -> (Player, Volume) {
        let module = try OutputTests.loadHeadset(changes: session.changes)
        var unloaded = false
        defer { if !unloaded { _ = try? run("pactl", "unload-module", module) } }
        let (music, own) = try session.startMusic()
        let index = try #require(music.index)
        try moveToHeadset(music, index: index)
        let first = try startDaemon()
        try session.awaitStatus(first, "the music known to play on the headset") { status in
            status.streams.contains { $0.index == index && $0.state == .playing }
        }
        // Its battery dies: the server moves the music to the speakers; no player, so it is held muted.
        _ = try run("pactl", "unload-module", module)
        unloaded = true
        try first.awaitLog("stays muted until the user", timeout: 5)
        let entry = try #require(try Self.entries(in: journal).first { $0.sinkInput == index }, "not journaled")
        #expect(entry.policyMuted && entry.heldForLoss == true, "\(entry)")
        first.kill()
        return (music, own)
    }

    /// Moves the music to the headset as its user would, and waits until the server has it there
    /// (``UserMove``: WirePlumber 0.4 now and then leaves a just-moved stream where it was).
    func moveToHeadset(_ music: Player, index: UInt32) throws {
        let headset = try #require(try Self.sinkIndex("headset"), "no headset sink")
        try UserMove.move(index, to: "headset", sinkIndex: headset, changes: session.changes) { try music.stream() }
    }

    /// The index of the sink named `name`, if the server has one.
    static func sinkIndex(_ name: String) throws -> UInt32? {
        try run("pactl", "list", "short", "sinks").split(separator: "\n")
            .first { $0.split(separator: "\t").dropFirst().first.map(String.init) == name }
            .flatMap { $0.split(separator: "\t").first.flatMap { UInt32($0) } }
    }

    @Test("killed -9 mid-duck, restarted while the prompt still plays: ducks again from the user's level, restores to it")
    func restartedDuringTheInterruption() throws {
        let (music, own) = try session.startMusic()
        let first = try startDaemon()
        let prompt = try session.play(.long, role: "navigation", name: "navigation-app")
        try session.awaitInterrupted(music, own: own, by: .duck)
        first.kill()

        // Had it taken the ducked level for the user's own, it would duck to -40 dB and restore to -20.
        let second = try startDaemon()
        try session.awaitInterrupted(music, own: own, by: .duck)
        prompt.stop()
        try session.awaitRestored(music, to: own, timeout: 5)
        try awaitJournalEmpty()
        #expect(second.problems.isEmpty, "\(second.problems)")
    }

    @Test("killed -9 while interrupting, then the music app quits: the next start repairs its saved volume",
          arguments: Interruption.allCases)
    func killedThenStreamEnded(_ interruption: Interruption) throws {
        let (music, own) = try session.startMusic()
        let first = try startDaemon()
        let interrupter = try session.play(interruption.tone, role: interruption.role, name: "\(interruption.role)-app")
        try session.awaitInterrupted(music, own: own, by: interruption)
        first.kill()
        music.kill()
        try session.events.awaitRemoval(of: try #require(music.index))
        interrupter.stop()
        try session.events.awaitRemoval(of: try #require(interrupter.index))

        let second = try startDaemon()
        let repaired = try second.awaitLog("repaired the saved volume of sink-input-by-media-role:music")
        #expect(!repaired.contains("muted"), "\(repaired)")
        try second.awaitLog("journal: recovery done")
        try awaitJournalEmpty()

        let relaunched = try session.play(.music, role: "music", name: "music-app")
        let again = try relaunched.stream()
        #expect(DaemonTests.matches(again.volume, own), "relaunched music starts at \(again.volume), not at its own \(own)")
        #expect(!again.muted, "relaunched music starts muted")
        #expect(second.problems.isEmpty, "\(second.problems)")
    }

    @Test("killed -9 while ducked, then a new session (its runtime folder gone): the next start restores from the durable copy")
    func restoredFromTheDurableCopy() throws {
        let (music, own) = try session.startMusic()
        let first = try startDaemon()
        let prompt = try session.play(.long, role: "navigation", name: "navigation-app")
        try session.awaitInterrupted(music, own: own, by: .duck)
        // The durable copy follows the log moments later, off the way to the duck.
        try session.changes.await("the durable copy to hold the duck", timeout: 5) { () -> Probe<Void> in
            let entries = (try? Self.entries(in: self.durable)) ?? []
            return entries.contains { $0.sinkInput == music.index } ? .done(()) : .waiting("\(entries)")
        }
        first.kill()
        prompt.stop()
        try session.events.awaitRemoval(of: try #require(prompt.index))
        try FileManager.default.removeItem(at: runtime)

        let second = try startDaemon()
        try session.awaitRestored(music, to: own)
        try second.awaitLog("journal: recovery done")
        try awaitJournalEmpty()
        #expect(second.log.contains { $0.contains("an earlier run left 1 stream(s) changed") && $0.contains(durable) },
                "\(second.logText)")
        #expect(second.problems.isEmpty, "\(second.problems)")
    }

    @Test("the durable copy cannot be written: told at once, while the duck is still on; ducking and restoring go on; told again when it is written again")
    func durableCopyCannotBeWritten() throws {
        // The copy's folder would be inside a regular file: nothing can create it, not even root.
        try Data().write(to: stateHome.appendingPathComponent("audio-policyd"))
        let (music, own) = try session.startMusic()
        let daemon = try startDaemon()
        let prompt = try session.play(.long, role: "navigation", name: "navigation-app")
        try session.awaitInterrupted(music, own: own, by: .duck)
        // No further change to the journal comes while the prompt plays: only the sync thread's signal
        // can bring the report now.
        let report = try daemon.awaitLog("cannot write the journal's durable copy")
        #expect(report.contains("a crash is still covered"), "\(report)")
        let row = try #require(try daemon.stream(music.index))
        #expect(row.state == .ducked)
        #expect(try Self.entries(in: journal).contains { $0.sinkInput == music.index }, "the log has the duck all the same")
        // The way is cleared: the restore's record reaches the durable copy, and that is told too.
        try FileManager.default.removeItem(at: stateHome.appendingPathComponent("audio-policyd"))
        try FileManager.default.createDirectory(at: stateHome.appendingPathComponent("audio-policyd"),
                                                withIntermediateDirectories: false)
        prompt.stop()
        try session.awaitRestored(music, to: own)
        try daemon.awaitLog("the durable copy is written again")
        try awaitJournalEmpty()
        #expect(daemon.isRunning)
        // Told once, not at every change; nothing else went wrong.
        #expect(daemon.problems.count == 1 && daemon.problems[0].contains("durable copy"), "\(daemon.problems)")
    }

    @Test("a truncated journal is reported, set aside, and the daemon works", arguments: ["cut", "garbage"])
    func corruptJournal(_ kind: String) throws {
        let folder = runtime.appendingPathComponent("audio-policyd")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let whole = JournalFile(entries: [JournalEntry(
            sinkInput: 4_000_000, restoreID: "sink-input-by-media-role:music", application: "gone", pid: 1,
            volume: [65536, 65536], channelMap: [1, 2], muted: false)]).encoded()
        let bytes = kind == "cut" ? whole.prefix(whole.count / 2) : Data("\u{0}\u{7f}not a journal".utf8)
        try bytes.write(to: URL(fileURLWithPath: journal))

        let (music, own) = try session.startMusic()
        let daemon = try startDaemon()
        let warning = try daemon.awaitLog("is unreadable")
        #expect(warning.contains("warning") && warning.contains("set aside as \(journal).corrupt-"), "\(warning)")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        let aside = try #require(names.first { $0.hasPrefix("journal.json.corrupt-") }, "\(names)")
        #expect(try Data(contentsOf: folder.appendingPathComponent(aside)) == bytes, "the bad journal was not kept as it was")
        #expect(!names.contains("journal.json"))

        // And it works: a prompt ducks the music, its end restores it.
        let prompt = try session.play(.long, role: "navigation", name: "navigation-app")
        try session.awaitInterrupted(music, own: own, by: .duck)
        #expect(try !Self.entries(in: journal).isEmpty, "the duck is not on record")
        prompt.stop()
        try session.awaitRestored(music, to: own)
        try awaitJournalEmpty()
        #expect(daemon.isRunning)
    }

    @Test("the sound server restarts under the daemon: it keeps running, reconnects, repairs, and acts again")
    func soundServerRestart() throws {
        let server = try SoundServerProcess.current()
        let (music, own) = try session.startMusic()
        let daemon = try startDaemon()
        let prompt = try session.play(.long, role: "navigation", name: "navigation-app")
        try session.awaitInterrupted(music, own: own, by: .duck)
        let mark = daemon.logCount

        try server.restart()
        try session.resubscribe()
        // The players died with the server; the daemon did not.
        try daemon.awaitLog("sound server connection lost", after: mark, timeout: 10)
        try daemon.awaitLog("connected to", after: mark, timeout: 20)
        try daemon.awaitLog("repaired the saved volume of sink-input-by-media-role:music", after: mark, timeout: 10)
        try daemon.awaitLog("journal: recovery done", after: mark, timeout: 10)
        #expect(daemon.isRunning)
        _ = (music, prompt)

        // The relaunched music starts at its own level (the server had saved the duck), and a new
        // interruption on the new server is acted on.
        let again = try session.play(.music, role: "music", name: "music-app")
        let start = try again.stream()
        // (Not ducked either: the prompt that vanished with the old server must not linger for its hold.)
        #expect(DaemonTests.matches(start.volume, own) && !start.muted, "relaunched music starts at \(start), not at \(own)")
        try session.changes.watch(for: 0.5) {
            let now = try again.stream()
            #expect(DaemonTests.matches(now.volume, own), "the relaunched music was changed: \(now)\n\(daemon.logText)")
        }
        let level = try again.setVolume(percent: [85, 70])
        try again.unmute()
        let second = try session.play(.long, role: "navigation", name: "navigation-app")
        do {
            try session.awaitInterrupted(again, own: level, by: .duck, timeout: 5)
        } catch {
            Issue.record("\(error)\n\(daemon.logText)")
            throw error
        }
        second.stop()
        try session.awaitRestored(again, to: level)
        let status = try daemon.status()
        #expect(status.server != nil)
        #expect(daemon.problems.allSatisfy { $0.contains("sound server") }, "\(daemon.problems)")
    }

    // MARK: - Helpers

    static func entries(in path: String) throws -> [JournalEntry] {
        switch JournalStore(path: path).load(setAside: false) {
        case .empty: []
        case let .entries(entries), let .cutShort(entries): entries
        case let .corrupt(reason, _): throw JournalFile.Unreadable(description: reason)
        }
    }
}
