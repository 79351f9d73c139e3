@testable import AudioPolicyDaemon
import Foundation
import PulseBackend
import SoundBackend
import Testing

/// Output loss through the daemon against a ``FakeSoundServer``: a jack pulled (a port's availability —
/// null sinks on a real server have no ports, so this is where ports are tested), a headset's sink
/// removed with its streams rescued to the speakers, and the controls (a loose jack, the user's move).
/// The streams have no media player here (no session bus), so a lost one is held muted, not paused.
@Suite("Outputs against a fake sound server", .serialized)
struct OutputFakeServerTests {
    static let own: [UInt32] = [52428, 45875]

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

    static func builtin(headphones: Sink.Port.Availability, active: String) -> Sink {
        Sink(index: 0, name: "alsa_output.pci-0000_00_1f.3.analog-stereo", description: "Built-in Audio Analog Stereo",
             properties: ["device.string": "front:0", "device.bus": "pci", "device.description": "Built-in Audio Analog Stereo"],
             ports: [Sink.Port(name: "analog-output-speaker", type: "speaker", available: .unknown),
                     Sink.Port(name: "analog-output-headphones", type: "headphones", available: headphones)],
             activePort: active)
    }

    static let speakers = Sink(index: 0, name: "speakers", description: "Built-in Audio",
                               properties: ["device.string": "front:0", "device.bus": "pci"])
    static let headset = Sink(index: 1, name: "bluez_sink.AC_80_0A_12_34_56.a2dp_sink", description: "WH-1000XM4",
                              properties: ["device.string": "AC:80:0A:12:34:56", "api.bluez5.address": "AC:80:0A:12:34:56",
                                           "device.bus": "bluetooth", "device.form_factor": "headset"])

    func mutes(of index: UInt32, from start: Int = 0) -> [Bool] {
        server.writes[start...].compactMap { if case let .mute(to, muted) = $0, to == index { muted } else { nil } }
    }

    // MARK: - Ports

    @Test("headphones unplugged (the port unavailable, the speaker made active): the music is muted at once and stays muted; the user's volume change unmutes it at that volume")
    func jackPulled() throws {
        server.setSink(Self.builtin(headphones: .yes, active: "analog-output-headphones"))
        let music = server.addStream(role: "music", application: "Radio", volume: Self.own)
        let daemon = try startDaemon()
        daemon.run(for: 0.3)
        #expect(mutes(of: music).isEmpty)

        let mark = server.writes.count
        server.setSink(Self.builtin(headphones: .no, active: "analog-output-speaker"))
        let pulled = Date()
        #expect(daemon.run(until: { server.streams[music]?.muted == true }, timeout: 2), "not muted: \(server.writes)")
        // At once, not at the end of the 1 s switch window (half of it: this runs beside other tests in CI).
        #expect(Date().timeIntervalSince(pulled) < 0.5, "muted \(Date().timeIntervalSince(pulled)) s after the jack was pulled")
        #expect(mutes(of: music, from: mark) == [true])
        // Past the switch window: still muted (no player to pause: held until the user acts).
        daemon.run(for: 1.5)
        #expect(server.streams[music]?.muted == true)

        server.userSetsVolume(music, [30000, 30000])
        #expect(daemon.run(until: { server.streams[music]?.muted == false }, timeout: 2), "the user's volume change did not unmute it")
        daemon.run(for: 0.3)
        #expect(server.streams[music]?.volume.values == [30000, 30000])
    }

    @Test("control: a loose jack reads unplugged for 200 ms: the music is unmuted as it is back, at exactly its level")
    func jackWiggle() throws {
        server.setSink(Self.builtin(headphones: .yes, active: "analog-output-headphones"))
        let music = server.addStream(role: "music", application: "Radio", volume: Self.own)
        let daemon = try startDaemon()
        daemon.run(for: 0.3)
        server.setSink(Self.builtin(headphones: .no, active: "analog-output-headphones"))
        #expect(daemon.run(until: { server.streams[music]?.muted == true }, timeout: 2))
        daemon.run(for: 0.2)
        server.setSink(Self.builtin(headphones: .yes, active: "analog-output-headphones"))
        let back = Date()
        #expect(daemon.run(until: { server.streams[music]?.muted == false }, timeout: 2), "still muted")
        // As it is back, not at the end of the 1 s switch window.
        #expect(Date().timeIntervalSince(back) < 0.5, "unmuted \(Date().timeIntervalSince(back)) s after the jack was back")
        daemon.run(for: 0.2)
        #expect(server.streams[music]?.volume.values == Self.own)
    }

    @Test("control: a port change on a sink nothing plays on, and from speaker to headphones, mute nothing")
    func harmlessPortChanges() throws {
        server.setSink(Self.builtin(headphones: .no, active: "analog-output-speaker"))
        let music = server.addStream(role: "music", application: "Radio", volume: Self.own)
        let daemon = try startDaemon()
        daemon.run(for: 0.3)
        server.setSink(Self.builtin(headphones: .yes, active: "analog-output-headphones"))
        daemon.run(for: 1.3)
        #expect(mutes(of: music).isEmpty, "\(server.writes)")
        #expect(server.streams[music]?.volume.values == Self.own)
    }

    // MARK: - Removal

    /// The speakers and the headset, the music playing on the headset, the daemon running.
    func musicOnHeadset() throws -> (DaemonOnFake, UInt32) {
        server.setSink(Self.speakers)
        server.setSink(Self.headset)
        let music = server.addStream(role: "music", application: "Radio", volume: Self.own, sink: 1)
        let daemon = try startDaemon()
        daemon.run(for: 0.3)
        return (daemon, music)
    }

    @Test("the headset's sink removed, its stream rescued to the speakers: muted before its move is even described")
    func headsetRemoved() throws {
        let (daemon, music) = try musicOnHeadset()
        server.removeSink(1, rescueTo: 0)
        #expect(daemon.run(until: { server.streams[music]?.muted == true }, timeout: 2), "not muted: \(server.writes)")
        daemon.run(for: 1.3)
        #expect(server.streams[music]?.muted == true)
        #expect(server.streams[music]?.sinkIndex == 0)
    }

    @Test("control: the user moves the music off the headset, which stays: nothing is muted")
    func userMove() throws {
        let (daemon, music) = try musicOnHeadset()
        server.moveStream(music, to: 0)
        daemon.run(for: 1.3)
        #expect(mutes(of: music).isEmpty, "\(server.writes)")
        #expect(server.streams[music]?.volume.values == Self.own)
    }

    // MARK: - The saved mute

    static let musicKey = "sink-input-by-media-role:music"

    /// The headset goes with the music on it, which the daemon holds muted; the server saves that mute
    /// for the music role. Returns the held stream.
    func holdMusicOnLostHeadset() throws -> (DaemonOnFake, UInt32) {
        let (daemon, music) = try musicOnHeadset()
        server.removeSink(1, rescueTo: 0)
        #expect(daemon.run(until: { server.streams[music]?.muted == true }, timeout: 2), "not muted: \(server.writes)")
        #expect(server.saved[Self.musicKey]?.muted == true, "the server did not save the hold's mute")
        return (daemon, music)
    }

    @Test("a new stream of the held stream's role, whose app sets its own volume, starts with our saved mute: it is unmuted at its app's level, the hold stays")
    func savedMuteOfTheHold() throws {
        let (daemon, music) = try holdMusicOnLostHeadset()
        let next = server.addStream(role: "music", application: "Podcasts", volume: [40000, 36000], appSetsVolume: true)
        #expect(server.streams[next]?.muted == true, "the fake did not restore the saved mute")
        #expect(daemon.run(until: { server.streams[next]?.muted == false }, timeout: 2), "the new stream kept our mute: \(server.writes)")
        daemon.run(for: 0.3)
        #expect(server.streams[next]?.volume.values == [40000, 36000])
        #expect(server.streams[next]?.muted == false)
        #expect(server.streams[music]?.muted == true, "the lost headset's music is still held")
    }

    @Test("control: the user mutes a stream of that role after the hold: a new stream starting muted is the user's and stays muted")
    func savedMuteOfTheUser() throws {
        let (daemon, music) = try holdMusicOnLostHeadset()
        let other = server.addStream(role: "music", application: "Jukebox", volume: [30000, 30000], appSetsVolume: true)
        #expect(daemon.run(until: { server.streams[other]?.muted == false }, timeout: 2))
        server.userSetsMute(other, true)
        daemon.run(for: 0.3)
        let next = server.addStream(role: "music", application: "Podcasts", volume: [40000, 36000], appSetsVolume: true)
        daemon.run(for: 1)
        #expect(server.streams[next]?.muted == true, "the user's saved mute was undone: \(server.writes)")
        #expect(server.streams[music]?.muted == true)
    }

    @Test("killed while holding the music muted: a stream of its role that started before the next run took that saved mute, and the next run unmutes it (control: a stream the dead run knew, muted by its user meanwhile, stays muted)",
          arguments: [false, true])
    func savedMuteAfterACrash(survivorMutedByUser: Bool) throws {
        // Known to the first run before the hold, on the speakers, unmuted, paused by its app (so the music
        // that starts after it pauses nothing of it).
        let known = server.addStream(role: "music", application: "Jukebox", volume: [30000, 30000], corked: true,
                                     appSetsVolume: true)
        let (first, music) = try holdMusicOnLostHeadset()
        #expect(first.journal.contains { $0.sinkInput == music && $0.savedMuteAbove != nil }, "\(first.journal)")
        // Killed: its connection hears nothing more, its loop never runs again.
        server.dropConnections()
        let judged: UInt32
        if survivorMutedByUser {
            server.userSetsMute(known, true)
            judged = known
        } else {
            // Started while no daemon ran: the server gave it the dead run's saved mute, at its app's level.
            judged = server.addStream(role: "music", application: "Podcasts", volume: [40000, 36000], appSetsVolume: true)
        }
        #expect(server.streams[judged]?.muted == true)
        let mark = server.writes.count
        let second = try startDaemon(name: "second")
        second.run(for: 1)
        let mutes = server.writes[mark...].compactMap { if case let .mute(to, muted) = $0, to == judged { muted } else { nil } }
        if survivorMutedByUser {
            #expect(server.streams[judged]?.muted == true, "the user's mute was undone: \(mutes)")
            #expect(mutes.isEmpty, "\(mutes)")
        } else {
            #expect(server.streams[judged]?.muted == false, "the dead run's saved mute stayed: \(server.writes[mark...])")
            #expect(mutes == [false], "\(mutes)")
        }
        #expect(server.streams[judged]?.volume.values == (survivorMutedByUser ? [30000, 30000] : [40000, 36000]))
        _ = first
    }

    @Test("PulseAudio saves a call's mute again when it moves the muted music off a lost headset, after our unmute of another stream: killed then, the next run unmutes a music stream that took that mute (control: the user muted a stream of the role after the move, so the saved mute is theirs and stays)",
          arguments: [false, true])
    func callMuteSavedAgainByAMove(userMutedAfter: Bool) throws {
        server.savesMuteWithEveryChange = false
        let (first, music) = try musicOnHeadset()
        let call = server.addStream(role: "phone", application: "Phone", volume: [65536, 65536])
        #expect(first.run(until: { server.streams[music]?.muted == true }, timeout: 2), "\(server.writes)")
        // A corked music stream starts with the call's saved mute, which the daemon undoes: the key's saved
        // mute is no longer ours.
        let corked = server.addStream(role: "music", application: "Jukebox", volume: [30000, 30000], corked: true,
                                      appSetsVolume: true)
        #expect(first.run(until: { server.streams[corked]?.muted == false }, timeout: 2), "\(server.writes)")
        // The headset goes; the server moves the muted music to the speakers and saves its mute again.
        server.removeSink(1, rescueTo: 0)
        first.run(for: 0.3)
        #expect(server.saved[Self.musicKey]?.muted == true, "the move did not save the mute again")
        if userMutedAfter {
            server.userSetsMute(corked, true)
            first.run(for: 0.3)
        }
        // Killed; the call ends and a music app starts with the role's saved mute while no daemon runs.
        server.dropConnections()
        server.removeStream(call)
        let next = server.addStream(role: "music", application: "Podcasts", volume: [40000, 36000], appSetsVolume: true)
        #expect(server.streams[next]?.muted == true)
        let second = try startDaemon(name: "second")
        second.run(for: 1)
        #expect(server.streams[next]?.muted == userMutedAfter, "after the next start: \(server.writes)")
        #expect(server.streams[next]?.volume.values == [40000, 36000])
        _ = first
    }

    @Test("killed while holding the music muted after its headset went away: the next run keeps it muted at its own level until the user's volume change unmutes it (control: killed while a call's mute fallback held it, the next run unmutes it)",
          arguments: [true, false])
    func holdAfterACrash(headsetLost: Bool) throws {
        let (first, music) = try musicOnHeadset()
        var call: UInt32?
        if headsetLost {
            server.removeSink(1, rescueTo: 0)
            first.run(for: 1.5) // past the switch window: held until the user acts
        } else {
            call = server.addStream(role: "phone", application: "Phone", volume: [65536, 65536])
            first.run(for: 1.5)
        }
        #expect(server.streams[music]?.muted == true, "\(server.writes)")
        #expect(first.journal.contains { $0.sinkInput == music && $0.policyMuted && ($0.heldForLoss == true) == headsetLost },
                "\(first.journal)")
        // Killed: its connection hears nothing more, its loop never runs again. The call ends meanwhile.
        server.dropConnections()
        if let call { server.removeStream(call) }
        let second = try startDaemon(name: "second")
        second.run(for: 1)
        #expect(server.streams[music]?.muted == headsetLost, "after the next start: \(server.writes)")
        #expect(server.streams[music]?.volume.values == Self.own, "\(String(describing: server.streams[music]?.volume))")
        guard headsetLost else { return }
        #expect(second.journal.contains { $0.sinkInput == music && $0.heldForLoss == true }, "not on record: \(second.journal)")
        server.userSetsVolume(music, [30000, 30000])
        #expect(second.run(until: { server.streams[music]?.muted == false }, timeout: 2),
                "the user's volume change did not unmute it: \(server.writes)")
        second.run(for: 0.3)
        #expect(server.streams[music]?.volume.values == [30000, 30000])
        #expect(second.run(until: { second.journal.isEmpty }), "the journal kept \(second.journal)")
    }

    @Test("killed while holding the music muted, then the server restarts (its indexes start again): a stream of the role that takes the saved mute is unmuted by the next run (control: the user muted a stream of the role before the crash, so the saved mute is theirs and stays)",
          arguments: [false, true])
    func savedMuteAfterACrashAndAServerRestart(userMutedLast: Bool) throws {
        let (first, _) = try holdMusicOnLostHeadset()
        if userMutedLast {
            let other = server.addStream(role: "music", application: "Jukebox", volume: [30000, 30000], appSetsVolume: true)
            #expect(first.run(until: { server.streams[other]?.muted == false }, timeout: 2), "\(server.writes)")
            server.userSetsMute(other, true)
            first.run(for: 0.3)
        }
        let marked = first.journal.contains { $0.savedMuteAbove != nil && $0.savedMuteServer == server.cookie }
        #expect(marked != userMutedLast, "\(first.journal)")
        // Killed; then the server restarts while no daemon runs, and a music app starts on the new one with
        // the role's saved mute, at an index the dead run had also seen.
        server.dropConnections()
        server.goAway()
        server.comeBack(indexesAgain: true)
        let next = server.addStream(role: "music", application: "Podcasts", volume: [40000, 36000], appSetsVolume: true)
        #expect(next == 1 && server.streams[next]?.muted == true)
        let second = try startDaemon(name: "second")
        second.run(for: 1)
        #expect(server.streams[next]?.muted == userMutedLast, "after the next start: \(server.writes)")
        #expect(server.streams[next]?.volume.values == [40000, 36000])
        _ = first
    }
}
