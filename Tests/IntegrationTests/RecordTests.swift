import AudioPolicy
import Foundation
import Testing
import TestRequirements

// `audio-policyd record` on a real session (mpv with MPRIS, a navigation prompt, a call, a chat ping from
// libcanberra — what chat apps play through), replayed with `test`: it passes against the policy that
// was in force, and the control — the same file against a policy that never ducks — fails with readable
// diffs.

extension MPRISTests {
    @Test("record writes a real session as a fixture; `test` replays it green, and red against a policy that never ducks",
          .needs(RealApp.missing))
    func recordReplaysTheSession() throws {
        let (daemon, mpv, own, _) = try musicUnderDaemon()
        let folder = try TestEnvironment.temporaryFolder("audio-policyd-record")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("session.toml").path
        let errors = Pipe()
        let recorder = try Child([TestEnvironment.daemonBinary, "record", "--socket", daemon.socketPath, "-o", file],
                                 standardError: errors)
        let ready = Self.readLine(errors, timeout: 10)
        try #require(ready.contains("recording"), "record did not start: \(ready)")

        // A navigation prompt ducks the music, which comes back.
        let prompt = try play(.prompt, role: "navigation", name: "navigation-app")
        try awaitStream(mpv, "ducked by the prompt", timeout: 5) { $0.volume != own }
        try events.awaitRemoval(of: try #require(prompt.index), timeout: 10)
        try awaitMusicRestored(mpv, to: own)
        // A call pauses it through MPRIS, and resumes it after.
        let call = try play(.long, role: "phone", name: "call-app")
        try mpv.awaitStatus("Paused", timeout: 10)
        call.stop()
        try mpv.awaitStatus("Playing", timeout: 10)
        // A chat ping: a light duck.
        let sound = try RealApp.canberra(["-i", "message-new-instant"])
        let bell = try sound.awaitStream(changes: changes, timeout: 30) { $0["event.id"] != nil }
        try events.awaitRemoval(of: bell.index, timeout: 20)
        try awaitMusicRestored(mpv, to: own)
        sound.stop()

        recorder.signal(SIGINT)
        #expect(recorder.wait(timeout: 10) == 0, "record did not end cleanly on SIGINT")
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let fixture = try FixtureLoader.load(text: text, file: file)
        let starts = fixture.steps.compactMap { step -> Properties? in
            if case let .event(.streamStarted(_, properties, _, _, _, _, _)) = step.action { return properties }
            return nil
        }
        #expect(starts.contains { $0["media.role"] == "navigation" }, "the prompt is missing:\n\(text)")
        #expect(starts.contains { $0["media.role"] == "phone" }, "the call is missing:\n\(text)")
        #expect(starts.contains { $0["event.id"] == "message-new-instant" }, "the ping is missing:\n\(text)")
        #expect(!starts.contains { $0["media.name"] != nil }, "titles were recorded without --with-titles:\n\(text)")
        let mpvID = String(try #require(mpv.index))
        let expected = fixture.steps.compactMap { step -> StreamState? in
            if case let .expect(.stream(id, state, _, _)) = step.action, id.rawValue == mpvID { return state }
            return nil
        }
        #expect(expected.contains(.ducked) && expected.contains(.paused), "what the daemon did to mpv: \(expected)\n\(text)")

        // Replayed against the policy in force: green.
        let replay = try Self.runTest([file])
        #expect(replay.code == 0 && replay.output.contains("1 passed, 0 failed"), "\(replay.output)\n\(text)")
        // The control: a policy that never ducks cannot have done what the daemon did.
        let policy = TestEnvironment.packageRoot.appendingPathComponent("policies/calls-only.toml").path
        let other = try Self.runTest(["--policy", policy, file])
        #expect(other.code != 0, "\(other.output)")
        #expect(other.output.contains("stream \"\(mpvID)\" state: expected ducked, got playing"), "\(other.output)")
    }

    /// `audio-policyd test ARGUMENTS`: its exit status and standard output.
    static func runTest(_ arguments: [String]) throws -> (code: Int32, output: String) {
        let output = Pipe()
        let child = try Child([TestEnvironment.daemonBinary, "test"] + arguments, standardOutput: output)
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let code = child.wait(timeout: 30) ?? -1
        return (code, String(decoding: data, as: UTF8.self))
    }

    /// The first line written to `pipe` within `timeout` seconds (what arrived, if no whole line did).
    static func readLine(_ pipe: Pipe, timeout: Double) -> String {
        let fd = pipe.fileHandleForReading.fileDescriptor
        let deadline = Date() + timeout
        var text = Data()
        while !text.contains(UInt8(ascii: "\n")) {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { break }
            var wanted = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&wanted, 1, Int32(left * 1000)) > 0 else { break }
            var byte: UInt8 = 0
            guard read(fd, &byte, 1) == 1 else { break }
            text.append(byte)
        }
        return String(decoding: text, as: UTF8.self)
    }
}
