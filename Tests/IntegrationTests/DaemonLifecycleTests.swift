import AudioPolicy
import Foundation
import Testing

/// What interrupts the music: a navigation prompt (a duck) or a call (the mute fallback).
enum Interruption: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case duck
    case mute

    var testDescription: String { self == .duck ? "ducked by a prompt" : "muted by a call" }

    var tone: Tone { self == .duck ? .prompt : .long }
    var role: String { self == .duck ? "navigation" : "phone" }
    /// The class's hold, s: until it has passed, a new stream would be interrupted too.
    var hold: Double { 0.5 }
}

/// The stream-restore key of every role=music stream.
private let musicRestoreKey = "sink-input-by-media-role:music"

extension DaemonTests {
    /// Lets a policy time window pass (an interrupter's hold after it ended), so a stream started next is
    /// not subject to it. Nothing the server or the daemon reports marks the end of a hold.
    func letHoldPass(_ interruption: Interruption) {
        Thread.sleep(forTimeInterval: interruption.hold + 0.3)
    }

    @Test("a stream that ends mid-ramp is forgotten without error, and its saved volume is repaired")
    func streamEndingMidRamp() throws {
        let (music, own) = try startMusic(percent: [60, 45])
        let daemon = try startDaemon()
        let prompt = try play(.prompt, role: "navigation", name: "navigation-app")
        let index = try #require(music.index)
        // The 300 ms duck ramp has begun and not arrived: kill the app now.
        let midRamp = try awaitStream(music, "the duck ramp to begin") { $0.volume != own }
        music.kill()
        #expect(!midRamp.volume.isOffset(by: -20, from: own, tolerance: 0.5),
                "the ramp had already arrived (\(midRamp.volume)): not a mid-ramp end")

        try events.awaitRemoval(of: index)
        try awaitStatus(daemon, "the daemon to forget sink input #\(index)") { status in
            !status.streams.contains { $0.index == index }
        }
        try daemon.awaitLog("repaired the saved volume of \(musicRestoreKey)")
        #expect(try daemon.stream(prompt.index)?.class == "navigation", "the daemon stopped answering")

        prompt.stop()
        try events.awaitRemoval(of: try #require(prompt.index))
        letHoldPass(.duck)
        let relaunched = try play(.music, role: "music", name: "music-app")
        let again = try relaunched.stream()
        #expect(again.volume == own && !again.muted, "relaunched music starts at \(again), not at its own \(own)")
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
        #expect(daemon.isRunning)
    }

    @Test("an app that quits while interrupted keeps its saved volume: relaunched, it starts at its own",
          arguments: Interruption.allCases)
    func appQuittingWhileInterruptedKeepsItsSavedVolume(_ interruption: Interruption) throws {
        let (music, own) = try startMusic(percent: [60, 45])
        let daemon = try startDaemon()
        let interrupter = try play(interruption.tone, role: interruption.role, name: "\(interruption.role)-app")
        switch interruption {
        case .duck:
            let landed = Self.volume(own, at: -20)
            try awaitStream(music, "ducked to \(landed)") { Self.matches($0.volume, landed) }
        case .mute:
            try awaitStream(music, "muted by the call") { $0.muted }
        }
        let index = try #require(music.index)
        music.kill()
        try events.awaitRemoval(of: index)
        let repaired = try daemon.awaitLog("repaired the saved volume of \(musicRestoreKey)")
        #expect(!repaired.contains("muted"), "\(repaired)")

        interrupter.stop()
        try events.awaitRemoval(of: try #require(interrupter.index))
        letHoldPass(interruption)
        let relaunched = try play(.music, role: "music", name: "music-app")
        let again = try relaunched.stream()
        #expect(again.volume == own, "relaunched music starts at \(again.volume), not at its own \(own)")
        #expect(!again.muted, "relaunched music starts muted")
        let level = try record().level(Tone.musicBand)
        #expect(level > -40, "relaunched music is not audible (\(level) dB)")
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    @Test("SIGTERM while interrupting restores every stream exactly, then the daemon exits 0",
          arguments: Interruption.allCases)
    func sigtermRestoresEverything(_ interruption: Interruption) throws {
        let (music, own) = try startMusic()
        let daemon = try startDaemon()
        let before = try record().level(Tone.musicBand)
        let interrupter = try play(interruption.tone, role: interruption.role, name: "\(interruption.role)-app")
        let interrupterVolume = try interrupter.stream().volume
        switch interruption {
        case .duck:
            // Mid-ramp: the hardest moment to stop.
            try awaitStream(music, "the duck ramp to begin") { $0.volume != own }
        case .mute:
            try awaitStream(music, "muted by the call") { $0.muted }
        }

        let code = daemon.terminate()
        #expect(code == 0, "exit code \(code.map(String.init) ?? "none: still running"):\n\(daemon.logText)")
        // Restored by the time it has exited: nothing is left to chance after the daemon is gone.
        let now = try music.stream()
        #expect(now.volume == own, "the music is left at \(now.volume), its own is \(own)")
        #expect(!now.muted, "the music is left muted")
        #expect(try interrupter.stream().volume == interrupterVolume)
        #expect(daemon.log.contains { $0.contains("stopping: restoring every stream") })
        let after = try record().level(Tone.musicBand)
        #expect(abs(after - before) <= 0.5, "the music plays at \(after) dB after the stop, \(before) dB before")
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    @Test("SIGHUP: a broken policy is reported with file:line:column and the old one stays; a good one applies")
    func sighupReloadsThePolicy() throws {
        let folder = try TestEnvironment.temporaryFolder("audio-policyd-policy")
        defer { try? FileManager.default.removeItem(at: folder) }
        let policy = folder.appendingPathComponent("policy.toml")
        let original = try String(contentsOf: TestEnvironment.defaultPolicy, encoding: .utf8)
        try original.write(to: policy, atomically: true, encoding: .utf8)

        let (music, own) = try startMusic()
        let daemon = try startDaemon(policy: policy.path)
        // A long notification: the music is ducked -6 dB for as long as it plays.
        let notification = try play(.long, role: "event", name: "notification-app")
        let ducked = Self.volume(own, at: -6)
        try awaitStream(music, "ducked to \(ducked) by the notification") { Self.matches($0.volume, ducked) }
        #expect(try daemon.stream(notification.index)?.class == "notification")

        // Broken: a level that is no level, at a known line and column.
        var lines = original.components(separatedBy: "\n")
        let brokenLine = try #require(lines.firstIndex(of: #"duck = "-6 dB""#), "default.toml changed")
        lines[brokenLine] = #"duck = "very quiet""#
        try lines.joined(separator: "\n").write(to: policy, atomically: true, encoding: .utf8)
        var mark = daemon.logCount
        daemon.signal(SIGHUP)
        try daemon.awaitLog("keeping the policy in force", after: mark)
        let located = "\(policy.path):\(brokenLine + 1):"
        let report = daemon.log.dropFirst(mark).joined(separator: "\n")
        let position = try #require(report.range(of: located), "no \(located)COLUMN: in:\n\(report)")
        let column = report[position.upperBound...].prefix { $0.isNumber }
        #expect(!column.isEmpty && report[position.upperBound...].dropFirst(column.count).hasPrefix(":"),
                "no COLUMN: after \(located) in:\n\(report)")
        var status = try daemon.status()
        #expect(status.policy == policy.path)
        #expect(status.streams.first { $0.index == notification.index }?.class == "notification",
                "the old policy is not in force: \(Self.describe(status))")
        #expect(Self.matches(try music.stream().volume, ducked), "the music changed on a broken reload")
        #expect(daemon.isRunning)

        // Good: notifications become `mix` (they interrupt nobody), so the music comes back.
        let firstRule = try #require(original.range(of: "[[rule]]"))
        var good = original
        good.insert(contentsOf: """
            [[rule]]
            name = "events mix"
            match = { "media.role" = "event" }
            class = "mix"


            """, at: firstRule.lowerBound)
        try good.write(to: policy, atomically: true, encoding: .utf8)
        mark = daemon.logCount
        daemon.signal(SIGHUP)
        try daemon.awaitLog("reloaded", after: mark)
        status = try daemon.status()
        let row = status.streams.first { $0.index == notification.index }
        #expect(row?.class == "mix" && row?.rule.contains("events mix") == true, "\(Self.describe(status))")
        try awaitStream(music, "restored to exactly \(own) under the new policy", timeout: 3) { $0.volume == own }
        #expect(daemon.problems.filter { !$0.contains("SIGHUP") }.isEmpty, "\(daemon.problems)")
    }
}
