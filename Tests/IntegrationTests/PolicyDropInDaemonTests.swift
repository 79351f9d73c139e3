import AudioPolicy
import ControlProtocol
import Foundation
import Fuzzing
import Glibc
import Testing

extension DaemonTests {
    @Test("a drop-in in XDG_CONFIG_HOME/audio-policyd/policy.d changes one class key; SIGHUP keeps the old policy on a bad one and applies a fixed one")
    func dropInChangesTheDuckAndReloads() throws {
        let config = try TestEnvironment.temporaryFolder("audio-policyd-config")
        defer { try? FileManager.default.removeItem(at: config) }
        let folder = config.appendingPathComponent("audio-policyd/policy.d")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let dropIn = folder.appendingPathComponent("50-navigation.toml")
        try "# the prompt over the road noise\n[class.navigation]\nduck = \"-30 dB\"\n"
            .write(to: dropIn, atomically: true, encoding: .utf8)

        let (music, own) = try startMusic()
        // No --policy: the embedded default, and the drop-ins.
        let daemon = try DaemonProcess(changes: changes, environment: ["XDG_CONFIG_HOME": config.path])
        defer { _ = daemon.terminate() }
        let prompt = try play(.long, role: "navigation", name: "navigation-app")
        let deep = Self.volume(own, at: -30)
        try awaitStream(music, "ducked to -30 dB by the drop-in (the default's is -20 dB)") { Self.matches($0.volume, deep) }
        // Control: the default's own level is another volume, so the match above tells them apart.
        #expect(!Self.matches(deep, Self.volume(own, at: -20)))
        var status = try daemon.status()
        #expect(status.policyFiles == [Policy.embeddedDefaultSource, dropIn.path], "\(String(describing: status.policyFiles))")
        #expect(status.classSettings?["navigation"]?["duck"] == "\(dropIn.path):3")
        // The default's own line for it: `duck-ramp` in its [class.navigation].
        let lines = Policy.embeddedDefaultText.components(separatedBy: "\n")
        let navigation = try #require(lines.firstIndex(of: "[class.navigation]"))
        let rampLine = try #require(lines[navigation...].firstIndex { $0.hasPrefix("duck-ramp") }) + 1
        #expect(status.classSettings?["navigation"]?["duck-ramp"] == "\(Policy.embeddedDefaultSource):\(rampLine)")
        #expect(status.streams.first { $0.index == prompt.index }?.class == "navigation")

        // Broken drop-in: the reload is refused with the error in that file, and -30 dB stays.
        try "# the prompt over the road noise\n[class.navigation]\nduck = \"very quiet\"\n"
            .write(to: dropIn, atomically: true, encoding: .utf8)
        var mark = daemon.logCount
        daemon.signal(SIGHUP)
        try daemon.awaitLog("keeping the policy in force", after: mark)
        let report = daemon.log.dropFirst(mark).joined(separator: "\n")
        let located: String = dropIn.path + ":3:8: `duck` must be a level"
        #expect(report.contains(located), "\(report)")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(Self.matches(try music.stream().volume, deep), "the music changed on a broken reload")
        #expect(daemon.isRunning)

        // Fixed: -10 dB, and the music comes up to it under the running prompt.
        try "# the prompt over the road noise\n[class.navigation]\nduck = \"-10 dB\"\n"
            .write(to: dropIn, atomically: true, encoding: .utf8)
        mark = daemon.logCount
        daemon.signal(SIGHUP)
        try daemon.awaitLog("reloaded", after: mark)
        let shallow = Self.volume(own, at: -10)
        try awaitStream(music, "ducked to -10 dB by the fixed drop-in", timeout: 3) { Self.matches($0.volume, shallow) }
        status = try daemon.status()
        #expect(status.classSettings?["navigation"]?["duck"] == "\(dropIn.path):3")

        // Removed: the default's -20 dB again (SIGHUP looks for the drop-ins anew).
        try FileManager.default.removeItem(at: dropIn)
        mark = daemon.logCount
        daemon.signal(SIGHUP)
        try daemon.awaitLog("reloaded", after: mark)
        try awaitStream(music, "ducked to the default's -20 dB", timeout: 3) { Self.matches($0.volume, Self.volume(own, at: -20)) }
        #expect(try daemon.status().policyFiles == [Policy.embeddedDefaultSource])
        #expect(daemon.problems.filter { !$0.contains("SIGHUP") }.isEmpty, "\(daemon.problems)")
    }

    @Test("a bad drop-in stops the daemon from starting, with FILE:LINE:COLUMN on standard error")
    func badDropInAtStart() throws {
        let config = try TestEnvironment.temporaryFolder("audio-policyd-config")
        defer { try? FileManager.default.removeItem(at: config) }
        let folder = config.appendingPathComponent("audio-policyd/policy.d")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let dropIn = folder.appendingPathComponent("50-games.toml")
        try "[class.ambient]\nunfocused = \"dim\"\n".write(to: dropIn, atomically: true, encoding: .utf8)
        let bad = try PolicyCommand.run(["check"], config: config)
        #expect(bad.status == 1)
        #expect(bad.stderr == "\(dropIn.path):2:13: unknown `unfocused` \"dim\"; one of: duck, mute, nothing\n")
        let daemon = try PolicyCommand.run(["run", "--socket", config.appendingPathComponent("control").path], config: config)
        #expect(daemon.status == 1)
        #expect(daemon.stderr.contains("\(dropIn.path):2:13: unknown `unfocused`"), "\(daemon.stderr)")
        let explainBad = try PolicyCommand.run(["explain", "-p", "media.role=game"], config: config)
        #expect(explainBad.status == 1)
        #expect(explainBad.stderr == bad.stderr)
        // An explicit --policy is that file alone: the bad drop-in is not read.
        let alone = try PolicyCommand.run(["explain", "--policy", TestEnvironment.defaultPolicy.path, "-p", "media.role=game"],
                                          config: config)
        #expect(alone.status == 0, "\(alone.stderr)")
        // Control: fixed, `check` passes and names every file in force.
        try "[class.ambient]\nunfocused = \"duck\"\n".write(to: dropIn, atomically: true, encoding: .utf8)
        let good = try PolicyCommand.run(["check"], config: config)
        #expect(good.status == 0)
        #expect(good.stdout == "\(Policy.embeddedDefaultSource): ok\n\(dropIn.path): ok\n")
        let explained = try PolicyCommand.run(["explain", "-p", "media.role=game"], config: config)
        #expect(explained.status == 0, "\(explained.stderr)")
        #expect(explained.stdout.contains("unfocused:      duck to -12.0 dB"), "\(explained.stdout)")
        #expect(explained.stdout.contains("set in:         \(dropIn.path) (unfocused:2), \(Policy.embeddedDefaultSource) (on-output-loss:"),
                "\(explained.stdout)")
        let rules = try PolicyCommand.run(["explain", "--rules"], config: config)
        #expect(rules.stdout.hasPrefix("files: \(Policy.embeddedDefaultSource), \(dropIn.path)\n"), "\(rules.stdout)")
    }
}

/// `audio-policyd` run to its end with XDG_CONFIG_HOME set, for the commands that load the policy in force.
enum PolicyCommand {
    static func run(_ arguments: [String], config: URL) throws -> CommandOutcome {
        try CommandOutcome.run(TestEnvironment.daemonBinary, arguments, environment: ["XDG_CONFIG_HOME": config.path])
    }
}
