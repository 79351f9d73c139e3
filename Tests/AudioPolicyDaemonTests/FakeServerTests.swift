import AudioPolicy
@testable import AudioPolicyDaemon
import Foundation
import PulseBackend
import SoundBackend
import Testing

/// The daemon's actuation and recovery against a ``FakeSoundServer``: no sound server, no session bus.
/// The real-server tests (IntegrationTests: DaemonDuckTests, RecoveryTests, SavedDuckTests) check the
/// same on PulseAudio and PipeWire; these run everywhere, in seconds.
@Suite("Daemon against a fake sound server", .serialized)
struct FakeServerTests {
    /// The user's own per-channel level of the music (80 %, 70 %).
    static let own: [UInt32] = [52428, 45875]
    static let musicKey = "sink-input-by-media-role:music"

    let scratch: ScratchDirectory
    let server = FakeSoundServer()

    init() throws {
        scratch = try ScratchDirectory()
    }

    func startDaemon(name: String = "daemon") throws -> DaemonOnFake {
        let daemon = try DaemonOnFake(server: server, directory: scratch.url, name: name)
        try #require(daemon.run(until: { daemon.isReady }), "the daemon never became ready")
        return daemon
    }

    func volume(_ index: UInt32) -> ChannelVolumes? { server.streams[index]?.volume }

    func volumeWrites(to index: UInt32, from start: Int = 0) -> [ChannelVolumes] {
        server.writes[start...].compactMap { if case let .volume(to, volume) = $0, to == index { volume } else { nil } }
    }

    /// Music playing, the daemon connected, then a navigation prompt: the music ducked by its -20 dB.
    func duckedByPrompt(_ daemon: DaemonOnFake, music: UInt32) throws -> UInt32 {
        // The music has played a moment (a stream that starts under a prompt is ducked at once).
        daemon.run(for: 0.2)
        let prompt = server.addStream(role: "navigation", application: "Navigator", volume: [65536, 65536])
        let ducked = daemon.run(until: { volume(music)?.isOffset(by: -20, from: .init(values: Self.own)) == true })
        try #require(ducked, "the music was not ducked by -20 dB: \(server.writes)")
        return prompt
    }

    // MARK: - Ducking and restoring

    @Test("a stream whose volume the server tells late (pipewire-pulse), started under a prompt, is ducked once the volume is told; control: with no prompt it is left at its own level",
          arguments: [true, false])
    func lateVolumeGetsTheDuck(prompted: Bool) throws {
        let daemon = try startDaemon()
        if prompted { server.addStream(role: "navigation", application: "Navigator", volume: [65536, 65536]) }
        daemon.run(for: 0.2)
        let music = server.addStream(role: "music", application: "Music", volume: Self.own, volumePending: true)
        // The duck's ramp (300 ms) runs out while the volume is unknown: nothing may be written then.
        daemon.run(for: 0.6)
        #expect(volumeWrites(to: music).isEmpty, "written before the server told the volume: \(server.writes)")
        server.volumeArrives(music, Self.own)
        if prompted {
            #expect(daemon.run(until: { volume(music)?.isOffset(by: -20, from: .init(values: Self.own)) == true }),
                    "not ducked once the volume arrived: \(String(describing: volume(music)))")
        } else {
            daemon.run(for: 0.6)
            #expect(volumeWrites(to: music).isEmpty, "control: written with nothing to duck it: \(server.writes)")
            #expect(volume(music) == ChannelVolumes(values: Self.own, channelMap: FakeSoundServer.stereo))
        }
    }

    @Test("a level its user sets while nothing interrupts it is its own: the next prompt ducks it from there and gives it back exactly (control: the level it started at, untouched)",
          arguments: [true, false])
    func usersLevelIsTheNextDucksOwn(userSets: Bool) throws {
        let music = server.addStream(role: "music", application: "Music", volume: Self.own)
        let daemon = try startDaemon()
        daemon.run(for: 0.2)
        let users: [UInt32] = [39321, 42598]
        if userSets { server.userSetsVolume(music, users) }
        daemon.run(for: 0.2)
        let level = ChannelVolumes(values: userSets ? users : Self.own, channelMap: FakeSoundServer.stereo)
        let prompt = server.addStream(role: "navigation", application: "Navigator", volume: [65536, 65536])
        #expect(daemon.run(until: { volume(music)?.isOffset(by: -20, from: level) == true }),
                "not ducked from \(level): \(String(describing: volume(music)))")
        server.removeStream(prompt)
        #expect(daemon.run(until: { volume(music) == level && daemon.journal.isEmpty }, timeout: 3),
                "not given back \(level): \(String(describing: volume(music)))")
    }

    @Test("a music stream whose volume and mute the server tells late (pipewire-pulse), started during a call, is muted only once they are told, and unmuted after; control: told with its user's saved mute, the call's mute yields to it and nothing of ours touches it",
          arguments: [false, true])
    func lateVolumeDuringACall(usersMute: Bool) throws {
        server.savesMuteWithEveryChange = true
        if usersMute {
            let earlier = server.addStream(role: "music", application: "Music", volume: Self.own)
            server.userSetsMute(earlier, true)
            server.removeStream(earlier)
        }
        let daemon = try startDaemon()
        let call = server.addStream(role: "phone", application: "Phone", volume: [65536, 65536])
        daemon.run(for: 0.2)
        let music = server.addStream(role: "music", application: "Music", volume: Self.own, volumePending: true)
        // The call's fade-out (300 ms) runs out while the volume is unknown: nothing may be written then.
        daemon.run(for: 0.6)
        #expect(volumeWrites(to: music).isEmpty && !server.writes.contains(.mute(music, true)),
                "written before the server told the volume: \(server.writes)")
        #expect(daemon.journal.allSatisfy { $0.sinkInput != music }, "on record with nothing written: \(daemon.journal)")
        server.volumeArrives(music, Self.own)
        daemon.run(for: 0.3)
        #expect(server.streams[music]?.muted == true)
        #expect(server.writes.contains(.mute(music, true)) == !usersMute, "\(server.writes)")
        server.removeStream(call)
        daemon.run(for: 1.5)
        #expect(server.streams[music]?.muted == usersMute, "after the call: \(server.writes)")
        #expect(server.writes.contains(.mute(music, false)) == !usersMute, "\(server.writes)")
        #expect(server.streams[music]?.volume.values == Self.own, "\(String(describing: server.streams[music]))")
    }

    @Test("a music stream announced before a call, whose key's entry WirePlumber restores only as its volume arrives, gets the mute the call's fade-out of the other music saved meanwhile: ours, undone after the call; control: the other music muted by its user before the call, the entry's mute is the user's and stays",
          arguments: [false, true])
    func lateRestoreAfterTheCallsFade(usersMuteBefore: Bool) throws {
        server.savesMuteWithEveryChange = true
        let playing = server.addStream(role: "music", application: "Music", volume: Self.own)
        if usersMuteBefore { server.userSetsMute(playing, true) }
        let daemon = try startDaemon()
        daemon.run(for: 0.2)
        let late = server.addStream(role: "music", application: "Radio", volume: Self.own, volumePending: true)
        daemon.run(for: 0.05)
        let call = server.addStream(role: "phone", application: "Phone", volume: [65536, 65536])
        // The call's fade-out of the music (300 ms) and its mute, saved for the key, before WirePlumber
        // gets to the new stream.
        daemon.run(for: 0.6)
        #expect(server.writes.contains(.mute(playing, true)) == !usersMuteBefore, "\(server.writes)")
        server.volumeArrivesRestoredNow(late, Self.own)
        daemon.run(for: 0.3)
        #expect(server.streams[late]?.muted == true, "\(String(describing: server.streams[late]))")
        server.removeStream(call)
        daemon.run(for: 1.5)
        #expect(server.streams[late]?.muted == usersMuteBefore, "after the call: \(server.writes)")
        #expect(server.streams[playing]?.muted == usersMuteBefore, "after the call: \(server.writes)")
    }

    @Test("a navigation prompt ducks the music by -20 dB in steps, journal first, and restores it exactly after hold and ramp")
    func promptDucksAndRestores() throws {
        let music = server.addStream(role: "music", application: "Music", volume: Self.own)
        let daemon = try startDaemon()
        let own = try #require(volume(music))
        // What the journal said as the first volume write left.
        var journalAtFirstWrite: [JournalEntry]?
        server.onWrite = { write in
            if journalAtFirstWrite == nil, case .volume(music, _) = write {
                journalAtFirstWrite = DaemonOnFake.journal(at: daemon.journalPath)
            }
        }
        let prompt = try duckedByPrompt(daemon, music: music)

        let recorded = try #require(journalAtFirstWrite?.first { $0.sinkInput == music },
                                    "no journal entry for the music when its first volume write left")
        #expect(recorded.ownVolume == own)
        // The level its duck settles at, for the next run's recovery: navigation's -20 dB.
        #expect(recorded.duckLevels.map { $0.count == 1 && abs($0[0] - 0.1) < 1e-9 } == true, "\(recorded)")
        let down = volumeWrites(to: music)
        #expect(down.count >= 2, "the duck was a jump, not a ramp: \(down)")
        #expect(zip(down, down.dropFirst()).allSatisfy { $1.values.sum <= $0.values.sum }, "not stepping down: \(down)")
        #expect(volumeWrites(to: prompt).isEmpty, "the prompt itself was written")
        #expect(server.streams[music]?.muted == false)

        let mark = server.writes.count
        server.removeStream(prompt)
        let ended = Date()
        #expect(daemon.run(until: { volume(music) == own }, timeout: 6), "not restored: \(String(describing: volume(music)))")
        let took = Date().timeIntervalSince(ended)
        // Navigation: hold 0.5 s, restore ramp 1 s.
        #expect(took >= 1.3, "restored \(took) s after the prompt ended: no hold and ramp")
        let up = volumeWrites(to: music, from: mark)
        #expect(up.count >= 2 && up.last == own, "\(up)")
        #expect(zip(up, up.dropFirst()).allSatisfy { $1.values.sum >= $0.values.sum }, "not stepping up: \(up)")
        #expect(daemon.run(until: { daemon.journal.isEmpty }), "the journal kept \(daemon.journal)")
    }

    @Test("control: a stream of the mix class leaves the music alone")
    func mixStreamLeavesMusicAlone() throws {
        let music = server.addStream(role: "music", application: "Music", volume: Self.own)
        let daemon = try startDaemon()
        let other = server.addStream(role: "production", application: "DAW", volume: [65536, 65536])
        daemon.run(for: 1)
        #expect(volumeWrites(to: music).isEmpty, "\(server.writes)")
        #expect(volume(music)?.values == Self.own)
        server.removeStream(other)
        daemon.run(for: 0.3)
        #expect(server.writes.isEmpty, "\(server.writes)")
    }

    @Test("the user sets the music's volume while it is ducked: the daemon stops writing it, and the user's level stays; with a step of the daemon's ramp still on its way (pipewire-pulse), which lands over the change, the daemon writes the user's level once more (control: with nothing on its way, nothing is written over it)",
          arguments: [false, true])
    func userChangesVolumeDuringDuck(stepOnItsWay: Bool) throws {
        let music = server.addStream(role: "music", application: "Music", volume: Self.own)
        let daemon = try startDaemon()
        let prompt = try duckedByPrompt(daemon, music: music)
        // Let the duck ramp finish.
        daemon.run(for: 0.5)
        let step = try #require(volumeWrites(to: music).last).values

        let users: [UInt32] = [39321, 42598]
        let mark = server.writes.count
        if stepOnItsWay {
            server.userSetsVolume(music, users, overtakenBy: step)
        } else {
            server.userSetsVolume(music, users)
        }
        daemon.run(for: 0.3)
        #expect(volume(music)?.values == users, "the user's \(users) left at \(String(describing: volume(music)))")
        #expect(volumeWrites(to: music, from: mark).map(\.values) == (stepOnItsWay ? [users] : []),
                "\(volumeWrites(to: music, from: mark))")
        server.removeStream(prompt)
        // Past the hold and the restore ramp.
        daemon.run(for: 2.5)
        #expect(volume(music)?.values == users, "the user's \(users) became \(String(describing: volume(music)))")
        #expect(volumeWrites(to: music, from: mark).allSatisfy { $0.values == users },
                "written over the user's level: \(volumeWrites(to: music, from: mark))")
        #expect(daemon.run(until: { daemon.journal.isEmpty }), "the journal kept \(daemon.journal)")
    }

    // MARK: - Recovery

    @Test("music its user muted before the daemon knew it stays muted through a call (control: unmuted music is muted for the call and unmuted after)",
          arguments: [true, false])
    func userMutedMusicStaysMutedThroughACall(userMuted: Bool) throws {
        let music = server.addStream(role: "music", application: "Music", volume: Self.own, muted: userMuted)
        let daemon = try startDaemon()
        daemon.run(for: 0.2)
        let call = server.addStream(role: "phone", application: "Phone", volume: [65536, 65536])
        let touched = daemon.run(until: { daemon.journal.contains { $0.sinkInput == music } }, timeout: 1.5)
        #expect(touched != userMuted, "journaled: \(daemon.journal)")
        #expect(daemon.run(until: { server.streams[music]?.muted == true }, timeout: 2), "\(server.writes)")
        server.removeStream(call)
        daemon.run(for: 1.5)
        #expect(server.streams[music]?.muted == userMuted, "the mute after the call: \(server.writes)")
        let unmutes = server.writes.filter { $0 == .mute(music, false) }
        #expect(unmutes.isEmpty == userMuted, "\(server.writes)")
    }

    @Test("a call's mute the server saves again with the user's volume change: the next music is unmuted after the call (control: the user's own mute is kept), on both servers' saving",
          arguments: [(true, true), (true, false), (false, true), (false, false)])
    func callMuteSavedAgainWithTheUsersVolume(policyMuted: Bool, savesMuteWithEveryChange: Bool) throws {
        server.savesMuteWithEveryChange = savesMuteWithEveryChange
        let first = server.addStream(role: "music", application: "Music", volume: Self.own)
        let daemon = try startDaemon()
        daemon.run(for: 0.2)
        if !policyMuted { server.userSetsMute(first, true) }
        let call = server.addStream(role: "phone", application: "Phone", volume: [65536, 65536])
        daemon.run(for: 1.5)
        #expect(server.streams[first]?.muted == true, "\(server.writes)")
        // A corked music stream starts with the key's saved mute: ours is undone at once (it plays
        // nothing, so the call leaves it alone), and the server saves it unmuted.
        let corked = server.addStream(role: "music", application: "Music", volume: Self.own, corked: true)
        daemon.run(for: 0.3)
        #expect(server.streams[corked]?.muted == !policyMuted, "\(server.writes)")
        // The user sets the first music's volume, and the server saves its mute with it again.
        server.userSetsVolume(first, [40000, 30000])
        daemon.run(for: 0.3)
        #expect(server.saved[Self.musicKey]?.muted == true)
        let next = server.addStream(role: "music", application: "Music", volume: Self.own)
        #expect(server.streams[next]?.muted == true)
        daemon.run(for: 0.5)
        server.removeStream(call)
        daemon.run(for: 1.5)
        #expect(server.streams[next]?.muted == !policyMuted, "the next music after the call: \(server.writes)")
    }

    @Test("a music stream the server starts from the entry that the repair of its key over the call's mute replaces, heard of before the repair's answer (PulseAudio) or after it (WirePlumber), has our mute: unmuted when the call ends (control: one its app starts muted after the repair keeps its mute), on both servers' saving",
          arguments: [(true, true), (true, false), (false, true), (false, false)])
    func startOvertakesTheRepairOfTheCallsMute(overtakes: Bool, savesMuteWithEveryChange: Bool) throws {
        server.savesMuteWithEveryChange = savesMuteWithEveryChange
        let (music, call, daemon) = try musicMutedByACall()
        #expect(server.saved[Self.musicKey]?.muted == true, "the call's mute is not saved: \(String(describing: server.saved[Self.musicKey]))")
        if overtakes {
            server.startsOvertakingTheNextWrite(of: Self.musicKey, role: "music", application: "Radio", volume: Self.own)
        }
        // The music quits under the call: its key's entry is repaired to its own level, unmuted.
        server.removeStream(music)
        #expect(daemon.run(until: {
            server.writes.contains { if case .saved(Self.musicKey, _, muted: false) = $0 { true } else { false } }
        }, timeout: 2), "not repaired: \(server.writes)")
        let next: UInt32
        if overtakes {
            #expect(daemon.run(until: { server.overtakingStarts[Self.musicKey] != nil }, timeout: 2))
            next = try #require(server.overtakingStarts[Self.musicKey])
            #expect(server.streams[next]?.muted == true, "it did not start from the entry before the repair")
        } else {
            // Past the second in which a start may still have the entry the repair replaced.
            daemon.run(for: 1.2)
            next = server.addStream(role: "music", application: "Radio", volume: Self.own, appMutes: true)
        }
        daemon.run(for: 0.5)
        server.removeStream(call)
        daemon.run(for: 2)
        #expect(server.streams[next]?.muted == !overtakes, "the next music: \(server.writes)")
        #expect(daemon.run(until: { daemon.journal.isEmpty }), "the journal kept \(daemon.journal)")
        if overtakes {
            #expect(server.saved[Self.musicKey]?.muted == false, "saved: \(String(describing: server.saved[Self.musicKey]))")
        }
    }

    @Test("a call's fade-in cut short by a server restart: the music's saved entry is repaired unmuted and the next music starts unmuted (control: music its user muted keeps its key's saved mute), on both servers' saving",
          arguments: [(false, true), (false, false), (true, true), (true, false)])
    func serverRestartDuringTheFadeIn(userMuted: Bool, savesMuteWithEveryChange: Bool) throws {
        server.savesMuteWithEveryChange = savesMuteWithEveryChange
        let music = server.addStream(role: "music", application: "Music", volume: Self.own)
        if userMuted { server.userSetsMute(music, true) }
        let daemon = try startDaemon()
        daemon.run(for: 0.2)
        let call = server.addStream(role: "phone", application: "Phone", volume: [65536, 65536])
        daemon.run(for: 1.5)
        #expect(server.streams[music]?.muted == true, "\(server.writes)")
        server.removeStream(call)
        if userMuted {
            daemon.run(for: 0.3)
        } else {
            // Our unmute is out and the fade-in under way (500 ms): the journal holds the music's own mute
            // (unmuted), never its user's; the policy's mute stays on record until the server has
            // answered the unmute (lost, it leaves our mute saved for the key).
            #expect(daemon.run(until: { server.writes.contains(.mute(music, false)) }, timeout: 2), "\(server.writes)")
            #expect(daemon.journal.first { $0.sinkInput == music }.map { !$0.muted } == true,
                    "journaled as muted by its user: \(daemon.journal)")
        }
        server.goAway()
        #expect(daemon.run(until: { daemon.daemon.connectedServer == nil }))
        server.comeBack()
        #expect(daemon.run(until: { daemon.daemon.connectedServer != nil }))
        #expect(daemon.run(until: { daemon.journal.isEmpty }), "the journal kept \(daemon.journal)")
        #expect(server.saved[Self.musicKey]?.muted == userMuted, "saved: \(String(describing: server.saved[Self.musicKey]))")
        let next = server.addStream(role: "music", application: "Music", volume: Self.own)
        daemon.run(for: 0.5)
        #expect(server.streams[next]?.muted == userMuted, "the next music: \(server.writes)")
    }

    /// Music playing, then a call: the daemon (`first`) has muted the music for it.
    func musicMutedByACall() throws -> (music: UInt32, call: UInt32, first: DaemonOnFake) {
        let music = server.addStream(role: "music", application: "Music", volume: Self.own)
        let first = try startDaemon(name: "first")
        first.run(for: 0.2)
        let call = server.addStream(role: "phone", application: "Phone", volume: [65536, 65536])
        #expect(first.run(until: { server.streams[music]?.muted == true }, timeout: 3), "\(server.writes)")
        first.run(for: 0.2)
        return (music, call, first)
    }

    /// Music playing, a call mutes it and ends: the daemon (`first`) has sent the policy's unmute.
    func callEndsWithTheUnmuteSent() throws -> (music: UInt32, first: DaemonOnFake) {
        let (music, call, first) = try musicMutedByACall()
        server.removeStream(call)
        #expect(first.run(until: { server.writes.contains(.mute(music, false)) }, timeout: 3), "\(server.writes)")
        return (music, first)
    }

    @Test("killed between the policy's unmute and the server's answer, the music ending with that unmute lost: the next start repairs its key unmuted (control: killed after the answer, nothing is left to repair)",
          arguments: [false, true])
    func killedBeforeTheUnmuteIsAnswered(answered: Bool) throws {
        let (music, first) = try callEndsWithTheUnmuteSent()
        if answered {
            #expect(first.run(until: { first.journal.isEmpty }, timeout: 3), "the journal kept \(first.journal)")
        } else {
            #expect(first.journal.first { $0.sinkInput == music }?.policyMuted == true,
                    "the policy's mute is not on record until the unmute is answered: \(first.journal)")
        }
        // Killed; the music ends, and the server kept the call's mute for its key (the unmute never
        // reached it, as a stream that ends at once loses it).
        server.dropConnections()
        server.removeStream(music)
        server.saved[Self.musicKey] = StreamRestoreEntry(name: Self.musicKey, volume: server.saved[Self.musicKey]?.volume,
                                                         muted: true, device: nil)
        let mark = server.writes.count
        let second = try startDaemon(name: "second")
        second.run(for: 0.3)
        let repairs = server.writes[mark...].filter { if case .saved(Self.musicKey, _, _) = $0 { true } else { false } }
        if answered {
            #expect(repairs.isEmpty, "repaired though nothing was left on record: \(repairs)")
        } else {
            #expect(server.saved[Self.musicKey]?.muted == false, "the key's entry kept our mute: \(repairs)")
        }
        _ = first
    }

    @Test("killed between the policy's unmute and the server's answer, the music ending with that unmute lost: music that started meanwhile with the saved mute is unmuted by the next daemon (control: its key not saved muted — the unmute applied — music its app started muted stays muted)",
          arguments: [true, false])
    func startMeanwhileWithALostUnmutesMute(unmuteLost: Bool) throws {
        let (music, first) = try callEndsWithTheUnmuteSent()
        #expect(first.journal.first { $0.sinkInput == music }?.savedMuteIfUnmuteLost == true,
                "the journal does not say where the key's saved mute would be ours: \(first.journal)")
        // Killed; the music ends. Lost, the unmute leaves the call's mute saved for the key, and the next
        // music gets it; applied, the key's saved mute is not ours (here: nothing saved), and the next
        // music is muted by its app.
        server.dropConnections()
        server.removeStream(music)
        if unmuteLost {
            server.saved[Self.musicKey] = StreamRestoreEntry(name: Self.musicKey, volume: server.saved[Self.musicKey]?.volume,
                                                             muted: true, device: nil)
        } else {
            server.saved[Self.musicKey] = nil
        }
        // Its app sets a level of its own (PulseAudio restores only the mute then): no level of ours tells.
        let next = server.addStream(role: "music", application: "Music", volume: [30000, 20000], muted: !unmuteLost,
                                    appSetsVolume: true)
        #expect(server.streams[next]?.muted == true)
        let second = try startDaemon(name: "second")
        second.run(for: 0.5)
        #expect(server.streams[next]?.muted == !unmuteLost, "the music that started meanwhile: \(server.writes)")
        _ = first
    }

    @Test("killed during a call: music its user muted keeps its mute when the next daemon mutes the other music for the call again as it hears of the streams (control: music the policy muted is unmuted after the call)",
          arguments: [true, false])
    func usersMuteSurvivesTheCallsMuteAtRecovery(userMutes: Bool) throws {
        // Heard in this order by the next daemon: the music, the call (which mutes it at once), the other.
        let music = server.addStream(role: "music", application: "Music", volume: Self.own, pid: 4242)
        let call = server.addStream(role: "phone", application: "Phone", volume: [65536, 65536], corked: true)
        let other = server.addStream(role: "music", application: "Music", volume: [30000, 20000], pid: 4242,
                                     appSetsVolume: true)
        let first = try startDaemon(name: "first")
        first.run(for: 0.2)
        if userMutes {
            server.userSetsMute(other, true)
            first.run(for: 0.2)
        }
        server.uncork(call)
        #expect(first.run(until: { server.streams[music]?.muted == true && server.streams[other]?.muted == true },
                          timeout: 3), "\(server.writes)")
        first.run(for: 0.3)
        server.dropConnections()
        let second = try startDaemon(name: "second")
        second.run(for: 0.5)
        #expect(server.streams[music]?.muted == true, "the music under the call: \(server.writes)")
        #expect(server.streams[other]?.muted == true, "the other music under the call: \(server.writes)")
        server.removeStream(call)
        second.run(for: 1.5)
        #expect(server.streams[music]?.muted == false, "the music after the call: \(server.writes)")
        #expect(server.streams[other]?.muted == userMutes, "the other music after the call: \(server.writes)")
        _ = first
    }

    /// Found by the levels property run (seed 2656334811696958429; `Tests/Fixtures/levels/users-mute-as-an-ended-streams-repair-is-answered.toml`):
    /// the journal keeps an ended stream's entry until the server has answered its repair, and a mark of
    /// our saved mute on it that nothing updated made the next run, after a kill in that moment, unmute a
    /// stream that started with its user's mute of the key.
    @Test("a music stream the call muted ends, its repair not answered yet, and its user changes the other music's mute: the ended stream's journal entry no longer marks the saved mute as ours (control: no user mute, the mark stays)",
          arguments: [true, false])
    func usersMuteTakesTheMarkOffAnEndedStreamsEntry(userMutes: Bool) throws {
        let music = server.addStream(role: "music", application: "Music", volume: Self.own)
        let other = server.addStream(role: "music", application: "Other", volume: [30000, 20000], appSetsVolume: true)
        let first = try startDaemon(name: "first")
        first.run(for: 0.2)
        _ = server.addStream(role: "phone", application: "Phone", volume: [65536, 65536])
        #expect(first.run(until: { server.streams[music]?.muted == true }, timeout: 3), "\(server.writes)")
        first.run(for: 0.2)
        #expect(first.journal.first { $0.sinkInput == music }?.savedMuteAbove != nil,
                "the muted music's entry marks the saved mute as ours: \(first.journal)")
        server.savedEntryAnswersHeld = true
        server.removeStream(music)
        let key = "sink-input-by-media-role:music"
        #expect(first.run(until: { server.writes.contains { if case .saved(key, _, _) = $0 { true } else { false } } },
                          timeout: 3), "no repair of the music's entry: \(server.writes)")
        if userMutes {
            // The call muted it too: the user's change of its mute is an unmute (the saved mute is theirs either way).
            let muted = server.streams[other]?.muted == true
            server.userSetsMute(other, !muted)
            first.run(until: { first.journal.first { $0.sinkInput == music }?.savedMuteAbove == nil }, timeout: 3)
        } else {
            first.run(for: 0.3)
        }
        let entry = first.journal.first { $0.sinkInput == music }
        #expect(entry != nil, "the ended music's entry is kept until its repair is answered: \(first.journal)")
        #expect((entry?.savedMuteAbove == nil) == userMutes, "its mark: \(String(describing: entry))")
    }

    @Test("a recovery killed before the server answered it, its user muting the music it had unmuted: the next daemon leaves that mute, its user's (control: not muted, the music plays on at its level)",
          arguments: [true, false])
    func usersMuteAfterARecoveryKilledBeforeItsAnswer(userMutes: Bool) throws {
        let (music, call, first) = try musicMutedByACall()
        // Killed during the call, which ends while no daemon runs.
        server.dropConnections()
        server.removeStream(call)
        // The next daemon's recovery unmutes the music; the server takes it, and the daemon is killed
        // before the server's answer reaches it: the journal still holds the recovered entry.
        server.answersHeld = true
        let second = try DaemonOnFake(server: server, directory: scratch.url, name: "second")
        #expect(second.run(until: { server.streams[music]?.muted == false }, timeout: 3), "\(server.writes)")
        if userMutes {
            server.userSetsMute(music, true)
            #expect(second.run(until: { second.journal.contains { $0.sinkInput == music && $0.muted && !$0.policyMuted } },
                               timeout: 3), "the run that put the music back did not journal its user's mute: \(second.journal)")
        } else {
            second.run(for: 0.3)
        }
        server.dropConnections()
        server.answersHeld = false
        let mark = server.writes.count
        let third = try startDaemon(name: "third")
        third.run(for: 0.5)
        #expect(server.streams[music]?.muted == userMutes, "the music after the next start: \(server.writes[mark...])")
        #expect(volume(music)?.values == Self.own, "its level: \(String(describing: volume(music)))")
        _ = (first, second)
    }

    /// Found by the 120 s churn on both servers: a stream that started while no daemon ran, with the dead
    /// run's fade-out and mute, was heard after the next run had ducked the first music (its step saved
    /// that music's unmuted state as the key's) and muted another at once for the call: its mute was taken
    /// for one that overtook that mute, its user's, left on after the call, and the key repaired muted for
    /// good. The streams present at a connection are judged against what was saved before it.
    @Test("a music stream started while no daemon ran, with the dead run's mute, heard after the next run ducked the music and muted another at once: unmuted when the call ends (control: one its user muted, which the dead run knew, stays muted)",
          arguments: [true, false], [true, false])
    func startWithTheDeadRunsMuteHeardAfterAFade(startedWhileNoDaemonRan: Bool, savesMuteWithEveryChange: Bool) throws {
        server.savesMuteWithEveryChange = savesMuteWithEveryChange
        let music = server.addStream(role: "music", application: "Music", volume: Self.own)
        // A second stream of the music app (an app never interrupts itself).
        let app = 4000 + Int(music)
        let known = startedWhileNoDaemonRan ? nil : server.addStream(role: "music", application: "Music", volume: Self.own, pid: app)
        let first = try startDaemon(name: "first")
        first.run(for: 0.2)
        if let known {
            server.userSetsMute(known, true)
            first.run(for: 0.2)
        }
        // A navigation prompt that talks on: the next run, hearing it before the call, ducks the music (a
        // write of a stream the policy does not mute: the server saves its mute as the key's).
        let prompt = server.addStream(role: "navigation", application: "Maps", volume: [65536, 65536])
        #expect(first.run(until: { volume(music)?.values != Self.own }, timeout: 3), "\(server.writes)")
        let call = server.addStream(role: "phone", application: "Phone", volume: [65536, 65536])
        #expect(first.run(until: { server.streams[music]?.muted == true }, timeout: 3), "\(server.writes)")
        // Another stream of the music app, during the call: muted at once (and again by the next run, as it
        // hears it after the call and before the stream below).
        let during = server.addStream(role: "music", application: "Music", volume: Self.own, pid: app)
        #expect(first.run(until: { server.streams[during]?.muted == true }, timeout: 3), "\(server.writes)")
        first.run(for: 0.2)
        // Killed during the call; a music stream that starts now gets the key's saved mute, the policy's.
        server.dropConnections()
        let later = known ?? server.addStream(role: "music", application: "Music", volume: Self.own, pid: app)
        try #require(server.streams[later]?.muted == true, "the fake gave the new stream the key's saved mute")
        let second = try startDaemon(name: "second")
        second.run(for: 0.5)
        server.removeStream(call)
        server.removeStream(prompt)
        if startedWhileNoDaemonRan {
            #expect(second.run(until: { server.streams[later]?.muted == false }, timeout: 3),
                    "the start with the dead run's mute is still muted after the call: \(server.writes)")
        } else {
            second.run(for: 1.5)
            #expect(server.streams[later]?.muted == true, "its user's mute was undone: \(server.writes)")
        }
        #expect(second.run(until: { server.streams[music]?.muted == false && server.streams[during]?.muted == false },
                           timeout: 3), "\(server.writes)")
        _ = first
    }

    /// Found by the 120 s churn on PipeWire (seed 7342): recovery unmuted the music, the call still on
    /// muted it again at once, and recovery's unmute, counted only once the streams present were judged,
    /// overruled that newer mute of ours: a music stream that started next with it was taken for one its
    /// user muted, left muted after the call, and the key repaired muted.
    @Test("killed during a call: recovery unmutes the music and the call mutes it again; a music stream that starts next with that mute is unmuted when the call ends (control: one its user unmutes and mutes again stays muted)",
          arguments: [true, false], [true, false])
    func startAfterRecoveryAndTheCallsNewMute(usersMute: Bool, savesMuteWithEveryChange: Bool) throws {
        server.savesMuteWithEveryChange = savesMuteWithEveryChange
        let (music, call, first) = try musicMutedByACall()
        server.dropConnections()
        let second = try startDaemon(name: "second")
        #expect(second.run(until: { server.writes.contains(.mute(music, false)) }, timeout: 3), "\(server.writes)")
        #expect(second.run(until: { server.streams[music]?.muted == true }, timeout: 3), "\(server.writes)")
        second.run(for: 0.3)
        // Another stream of the music app, with the key's saved mute: the call's, ours.
        let later = server.addStream(role: "music", application: "Music", volume: Self.own, pid: 4000 + Int(music))
        try #require(server.streams[later]?.muted == true, "the fake gave the new stream the key's saved mute")
        second.run(for: 0.3)
        if usersMute {
            // As at a mixer: the stream shows muted, so the user unmutes it, then mutes it.
            server.userSetsMute(later, false)
            second.run(for: 0.3)
            server.userSetsMute(later, true)
            second.run(for: 0.3)
        }
        server.removeStream(call)
        if usersMute {
            second.run(for: 1.5)
            #expect(server.streams[later]?.muted == true, "its user's mute was undone: \(server.writes)")
        } else {
            #expect(second.run(until: { server.streams[later]?.muted == false }, timeout: 3),
                    "the start with our mute is still muted after the call: \(server.writes)")
        }
        #expect(second.run(until: { server.streams[music]?.muted == false }, timeout: 3), "\(server.writes)")
        _ = first
    }

    @Test("killed while ducking: the next start restores the music exactly (control: unless the user set it meanwhile)",
          arguments: [false, true])
    func crashRecovery(userSetsItMeanwhile: Bool) throws {
        let music = server.addStream(role: "music", application: "Music", volume: Self.own)
        let first = try startDaemon(name: "first")
        let prompt = try duckedByPrompt(first, music: music)
        #expect(first.journal.map(\.sinkInput) == [music])

        // Killed: its connection hears nothing more, its loop never runs again. The prompt ends meanwhile.
        server.dropConnections()
        server.removeStream(prompt)
        let users: [UInt32] = [30000, 45000]
        if userSetsItMeanwhile { server.userSetsVolume(music, users) }

        let mark = server.writes.count
        let second = try startDaemon(name: "second")
        if userSetsItMeanwhile {
            #expect(volume(music)?.values == users, "the user's level was overwritten: \(String(describing: volume(music)))")
            #expect(volumeWrites(to: music, from: mark).isEmpty, "\(volumeWrites(to: music, from: mark))")
        } else {
            #expect(volume(music)?.values == Self.own, "not restored: \(String(describing: volume(music)))")
            #expect(volumeWrites(to: music, from: mark).map(\.values) == [Self.own], "\(volumeWrites(to: music, from: mark))")
        }
        #expect(second.run(until: { second.journal.isEmpty }), "the journal kept \(second.journal)")
        _ = first
    }

    @Test("the server goes away mid-duck and the music comes back at the saved duck: repaired to the user's level (control: not a level the user saved meanwhile)",
          arguments: [false, true], [true, false])
    func serverRestartMidDuck(userSavesALevelMeanwhile: Bool, savesMuteWithEveryChange: Bool) throws {
        server.savesMuteWithEveryChange = savesMuteWithEveryChange
        let music = server.addStream(role: "music", application: "Music", volume: Self.own)
        let daemon = try startDaemon()
        _ = try duckedByPrompt(daemon, music: music)
        let savedDuck = try #require(server.saved[Self.musicKey]?.volume)
        #expect(savedDuck.isOffset(by: -20, from: .init(values: Self.own)), "the fake saved \(savedDuck)")

        server.goAway()
        #expect(daemon.run(until: { daemon.daemon.connectedServer == nil }))
        let users = ChannelVolumes(values: [20000, 20000], channelMap: FakeSoundServer.stereo)
        if userSavesALevelMeanwhile {
            server.saved[Self.musicKey] = StreamRestoreEntry(name: Self.musicKey, volume: users, muted: false, device: nil)
        }
        server.comeBack()
        // The music app comes back at what the server saved, before the daemon reconnects.
        let again = server.addStream(role: "music", application: "Music", volume: Self.own)
        #expect(volume(again) == (userSavesALevelMeanwhile ? users : savedDuck), "the relaunched music did not start at the saved level")
        let mark = server.writes.count
        #expect(daemon.run(until: { daemon.daemon.connectedServer != nil }))
        if userSavesALevelMeanwhile {
            daemon.run(for: 0.3)
            #expect(volume(again) == users && volumeWrites(to: again, from: mark).isEmpty,
                    "the user's own saved level was changed: \(volumeWrites(to: again, from: mark))")
        } else {
            #expect(daemon.run(until: { volume(again)?.values == Self.own }), "not repaired: \(String(describing: volume(again)))")
        }
        // The gone stream's saved entry is repaired from the journal either way, under both ways of saving.
        #expect(daemon.run(until: { server.saved[Self.musicKey]?.volume?.values == Self.own }),
                "saved entry \(String(describing: server.saved[Self.musicKey]))")
        #expect(daemon.run(until: { daemon.journal.isEmpty }), "the journal kept \(daemon.journal)")
    }

    @Test("the music quits while ducked: its saved entry, written at the duck, is repaired to the user's level")
    func savedEntryRepaired() throws {
        let music = server.addStream(role: "music", application: "Music", volume: Self.own)
        let daemon = try startDaemon()
        _ = try duckedByPrompt(daemon, music: music)
        let savedDuck = try #require(server.saved[Self.musicKey]?.volume)
        #expect(savedDuck.isOffset(by: -20, from: .init(values: Self.own)), "the fake saved \(savedDuck)")

        server.removeStream(music)
        #expect(daemon.run(until: { server.saved[Self.musicKey]?.volume?.values == Self.own }),
                "saved entry left at \(String(describing: server.saved[Self.musicKey]))")
        let repair = FakeSoundServer.Write.saved(Self.musicKey, .init(values: Self.own, channelMap: FakeSoundServer.stereo), muted: false)
        #expect(server.writes.firstIndex(of: repair) != nil, "\(server.writes)")
        // Control: the prompt's entry was never the daemon's to write.
        let savedNames = server.writes.compactMap { if case let .saved(name, _, _) = $0 { name } else { nil } }
        #expect(Set(savedNames) == [Self.musicKey], "\(savedNames)")
        #expect(daemon.run(until: { daemon.journal.isEmpty }), "the journal kept \(daemon.journal)")
    }

    @Test("stopping while the music is being restored, and the music quits meanwhile: the stop still finishes (control: not before the stop)",
          arguments: [false, true])
    func stopFinishesWhenTheRestoredStreamQuits(musicQuits: Bool) throws {
        let music = server.addStream(role: "music", application: "Music", volume: Self.own)
        let daemon = try startDaemon()
        let prompt = try duckedByPrompt(daemon, music: music)
        // The control: nothing finishes a stop that was never asked for.
        daemon.run(for: 0.3)
        #expect(!daemon.daemon.stopped)

        daemon.daemon.stop()
        // The stop's restore ramp runs for 200 ms; the music quits in the middle of it, its ramp cancelled,
        // and then the prompt: the engine hearing of that re-arms the one timer, for nothing (seen in the
        // benchmark: a daemon idle for ever after SIGTERM, when 20 streams ended around it).
        if musicQuits {
            server.removeStream(music)
            server.removeStream(prompt)
        }
        #expect(daemon.run(until: { daemon.daemon.stopped }, timeout: 3), "the stop never finished")
        if !musicQuits { #expect(volume(music) == .init(values: Self.own, channelMap: FakeSoundServer.stereo)) }
    }
}

private extension Array where Element == UInt32 {
    var sum: UInt64 { reduce(0) { $0 + UInt64($1) } }
}
