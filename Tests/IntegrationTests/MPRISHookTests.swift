import AudioPolicy
import ControlProtocol
import Foundation
import SessionBus
import Testing

// Hooks on real components: `audio-policyd interrupt` and `monitor` as a user runs them, a hook client
// speaking the control protocol, the shipped mpv script.

extension MPRISTests {
    // MARK: - interrupt

    @Test("`interrupt -- sleep 1` ducks mpv for as long as the command runs, restores it exactly, and exits with the command's status")
    func interruptDucksAndRestores() throws {
        let mpv = try startMPV()
        let daemon = try startDaemon()
        let own = try mpv.stream().volume
        let binary = TestEnvironment.daemonBinary

        let started = Date()
        let hook = try start([binary, "interrupt", "--socket", daemon.socketPath, "--class", "short", "--", "sleep", "1"])
        let ducked = DaemonTests.volume(own, at: -14)
        try awaitStream(mpv, "ducked -14 dB by the interruption") { DaemonTests.matches($0.volume, ducked) }
        let rows = try daemon.status().streams.filter { $0.hook != nil }
        #expect(rows.map(\.class) == ["short"] && rows.first?.application == "sleep", "\(rows)")
        #expect(try mpv.status() == "Playing", "a short interruption must duck, not pause")

        #expect(hook.wait(timeout: 5) == 0, "interrupt did not exit 0")
        #expect(Date().timeIntervalSince(started) >= 1, "the interruption did not last as long as the command")
        try awaitStream(mpv, "back at exactly \(own)", timeout: 4) { $0.volume == own }
        #expect(try daemon.status().streams.allSatisfy { $0.hook == nil })

        // The command's exit status is interrupt's.
        let failing = try start([binary, "interrupt", "--socket", daemon.socketPath, "--", "sh", "-c", "exit 7"])
        #expect(failing.wait(timeout: 5) == 7)
        // A class the policy does not know is a mistake: refused, and the command does not run.
        let marker = try TestEnvironment.temporaryFolder("audio-policyd-interrupt").appendingPathComponent("ran")
        let refused = try start([binary, "interrupt", "--socket", daemon.socketPath, "--class", "lullaby", "--",
                                 "touch", marker.path])
        #expect(refused.wait(timeout: 5) == 64)
        #expect(!FileManager.default.fileExists(atPath: marker.path), "the command ran although the class was refused")
        try? FileManager.default.removeItem(at: marker.deletingLastPathComponent())
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    @Test("a hook client killed (SIGKILL) mid-interruption releases it: the daemon ends it when the socket closes")
    func killedHookReleasesItsInterruption() throws {
        let mpv = try startMPV()
        let daemon = try startDaemon()
        let own = try mpv.stream().volume
        let hook = try start([TestEnvironment.daemonBinary, "interrupt", "--socket", daemon.socketPath, "--class", "short",
                              "--", "sleep", "30"])
        try awaitStream(mpv, "ducked by the interruption") { DaemonTests.matches($0.volume, DaemonTests.volume(own, at: -14)) }
        // Its command outlives it (as after any crash); the test cleans it up.
        let orphans = (try? String(contentsOfFile: "/proc/\(hook.pid)/task/\(hook.pid)/children", encoding: .utf8))?
            .split(separator: " ").compactMap { Int32($0) } ?? []
        defer { for pid in orphans { kill(pid, SIGKILL) } }

        let mark = daemon.logCount
        hook.kill()
        try daemon.awaitLog("control client gone: ending its interruption", after: mark)
        try awaitStream(mpv, "back at exactly \(own)", timeout: 4) { $0.volume == own }
        #expect(try daemon.status().streams.allSatisfy { $0.hook == nil })
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    // MARK: - monitor

    @Test("`monitor --json` prints where things stand, then stream, decision and player events live")
    func monitorPrintsEventsLive() throws {
        let mpv = try startMPV()
        let daemon = try startDaemon()
        try awaitNowPlaying(mpv, daemon)
        let pipe = Pipe()
        _ = try start([TestEnvironment.daemonBinary, "monitor", "--json", "--socket", daemon.socketPath], output: pipe)
        let lines = LineLog(reading: pipe, changes: changes)
        func awaitLine(_ what: String, after: Int = 0, _ match: @escaping ([String: Any]) -> Bool) throws -> [String: Any] {
            try changes.await("monitor to print \(what)", timeout: 5) { () throws -> Probe<[String: Any]> in
                for line in lines.lines(from: after) {
                    if let object = try? DaemonTests.object(line), match(object) { return .done(object) }
                }
                return .waiting("\(lines.count) lines: \(lines.lines().suffix(3))")
            }
        }
        let index = try #require(mpv.index)
        _ = try awaitLine("mpv's stream") { ($0["stream"] as? [String: Any])?["index"] as? Int == Int(index) }
        _ = try awaitLine("the owner") { (($0["nowPlaying"] as? [String: Any])?["player"] as? String) == mpv.busName }
        _ = try awaitLine("mpv's player") { (($0["player"] as? [String: Any])?["name"] as? String) == mpv.busName }

        let mark = lines.count
        let prompt = try play(.prompt, role: "navigation", name: "maps")
        _ = try awaitLine("mpv ducked", after: mark) {
            let stream = $0["stream"] as? [String: Any]
            return stream?["index"] as? Int == Int(index) && stream?["state"] as? String == "ducked"
        }
        _ = try awaitLine("the decision", after: mark) {
            (($0["decision"] as? [String: Any])?["action"] as? String)?.hasPrefix("ducked to -20.0 dB") == true
        }
        _ = try awaitLine("the prompt's stream", after: mark) {
            (($0["stream"] as? [String: Any])?["index"] as? Int) == prompt.index.map(Int.init)
        }
        try SessionBus.playerctl(mpv.name, "pause")
        _ = try awaitLine("mpv Paused", after: mark) {
            let player = $0["player"] as? [String: Any]
            return player?["name"] as? String == mpv.busName && player?["status"] as? String == "Paused"
        }
        // Every line is an event, never a reply.
        #expect(lines.lines().allSatisfy { (try? DaemonTests.object($0))?["event"] is String && !$0.contains("\"ok\"") })
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    // MARK: - claim, playback, subscribe: a player without MPRIS

    @Test("a hook that claims Now Playing gets the remote commands and the pause/resume requests for its stream; ignoring a pause falls back to fade-and-mute")
    func claimingHookGetsCommandsAndRequests() throws {
        let daemon = try startDaemon()
        // A player without MPRIS: its stream is paplay's, its controller the hook connection.
        let music = try play(.music, role: "music", name: "hook-player")
        let own = try music.setVolume(percent: [80, 80])
        let hook = try ControlConnection(path: daemon.socketPath)
        let claimed = try DaemonTests.object(hook.request(#"{"id":"c1","op":"claim","app":"hook-player","pid":\#(music.pid)}"#))
        #expect(claimed["ok"] as? Bool == true && claimed["id"] as? String == "c1", "\(claimed)")
        let token = try #require(claimed["token"] as? String)
        try awaitStatus(daemon, "the claim to own Now Playing") { $0.nowPlaying?.claim == token }

        // The media keys reach it.
        try SessionBus.playerctl("audiopolicy", "play-pause")
        let command = try DaemonTests.object(hook.readLine())
        #expect(command["event"] as? String == "command" && command["command"] as? String == "PlayPause"
            && command["token"] as? String == token, "\(command)")

        // A call asks it to pause its stream; it obeys (reports Paused within the second): no fallback,
        // and it is asked to resume after the call.
        var call = try play(.long, role: "phone", name: "call-app")
        let pause = try DaemonTests.object(hook.readLine())
        #expect(pause["event"] as? String == "pause" && pause["index"] as? Int == music.index.map(Int.init), "\(pause)")
        let obeyed = try DaemonTests.object(hook.request(#"{"id":5,"op":"playback","status":"Paused"}"#))
        #expect(obeyed["ok"] as? Bool == true && obeyed["id"] as? Int == 5, "\(obeyed)")
        #expect(try SessionBus.playerctl("audiopolicy", "status") == "Paused")
        try changes.watch(for: 1.3) { try #require(try !music.stream().muted, "muted although its player obeyed") }
        call.stop()
        let resume = try DaemonTests.object(hook.readLine())
        #expect(resume["event"] as? String == "resume" && resume["index"] as? Int == music.index.map(Int.init), "\(resume)")
        _ = try hook.request(#"{"id":6,"op":"playback","status":"Playing"}"#)

        // Next call, it ignores the pause: a second later the daemon fades and mutes its stream instead,
        // and unmutes it after the call.
        call = try play(.long, role: "phone", name: "call-app")
        _ = try hook.readLine()
        let asked = Date()
        try changes.await("the ignored pause to fall back to muting", timeout: 4) { () throws -> Probe<Void> in
            try music.stream().muted ? .done(()) : .waiting("\(try music.stream())")
        }
        #expect(Date().timeIntervalSince(asked) >= 0.9, "muted before the player had a second to pause")
        call.stop()
        try changes.await("hook-player unmuted at \(own) after the call", timeout: 4) { () throws -> Probe<Void> in
            let now = try music.stream()
            return !now.muted && now.volume == own ? .done(()) : .waiting("\(now)")
        }

        // Ending the claim gives Now Playing up.
        let ended = try DaemonTests.object(hook.request(#"{"id":8,"op":"end","token":"\#(token)"}"#))
        #expect(ended["ok"] as? Bool == true, "\(ended)")
        try awaitStatus(daemon, "the claim to give Now Playing up") { $0.nowPlaying?.claim == nil }
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    @Test("control protocol: request ids come back on every reply, errors say what is wrong, a subscriber hears changes after its reply")
    func controlProtocolErrorsAndSubscribe() throws {
        let daemon = try startDaemon()
        let client = try ControlConnection(path: daemon.socketPath)
        func failure(_ line: String, id: Int?, mentions words: [String]) throws {
            let reply = try DaemonTests.object(client.request(line))
            #expect(reply["ok"] as? Bool == false, "\(line) -> \(reply)")
            #expect(reply["id"] as? Int == id, "\(line): id not echoed: \(reply)")
            let error = reply["error"] as? String ?? ""
            for word in words { #expect(error.contains(word), "\(line): error \"\(error)\" does not mention \(word)") }
        }
        try failure(#"{"id":1,"op":"rewind"}"#, id: 1, mentions: ["unknown op", "claim", "subscribe"])
        try failure(#"{"id":2,"op":5}"#, id: 2, mentions: ["malformed"])
        try failure(#"{"id":3,"op":"subscribe","events":["weather"]}"#, id: 3, mentions: ["weather", "now-playing"])
        try failure(#"{"id":4,"op":"playback","status":"Paused"}"#, id: 4, mentions: ["claim"])
        try failure(#"{"id":5,"op":"end","token":"claim-999"}"#, id: 5, mentions: ["token"])
        try failure(#"{"id":6,"op":"begin","class":"lullaby"}"#, id: 6, mentions: ["lullaby", "short"])

        // subscribe: the reply first, then where things stand, then changes.
        let ok = try DaemonTests.object(client.request(#"{"id":10,"op":"subscribe","events":["stream","now-playing"]}"#))
        #expect(ok["ok"] as? Bool == true && ok["id"] as? Int == 10, "\(ok)")
        let initial = try DaemonTests.object(client.readLine())
        #expect(initial["event"] as? String == "now-playing" && initial.keys.contains("nowPlaying"), "\(initial)")
        let prompt = try play(.prompt, role: "navigation", name: "maps")
        let event = try DaemonTests.object(client.readLine())
        let stream = event["stream"] as? [String: Any]
        #expect(event["event"] as? String == "stream" && stream?["index"] as? Int == prompt.index.map(Int.init)
            && stream?["class"] as? String == "navigation", "\(event)")
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    // MARK: - The mpv hook

    @Test("the shipped mpv hook marks spoken audio, which a prompt then pauses through MPRIS and resumes, instead of ducking it")
    func mpvHookMarksSpokenAudio() throws {
        let script = TestEnvironment.packageRoot.appendingPathComponent("hooks/mpv/audio-policyd.lua").path
        let mpv = try startMPV(scripts: [script], options: ["audio-policyd-spoken=yes"])
        #expect(try mpv.stream().applicationName == "mpv podcast")
        let daemon = try startDaemon()
        let row = try #require(try daemon.stream(mpv.index))
        #expect(row.spoken, "mpv's stream is not spoken: \(row)")

        let own = try mpv.stream().volume
        let prompt = try play(.prompt, role: "navigation", name: "maps")
        try mpv.awaitStatus("Paused", timeout: 3)
        #expect(try mpv.stream().volume == own, "spoken audio was ducked")
        try events.awaitRemoval(of: try #require(prompt.index), timeout: 6)
        try mpv.awaitStatus("Playing", timeout: 4)
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }
}

extension MPRISTests {
    @Test("the mpv hook's `class` option holds an interruption while mpv plays, released on pause and when mpv is killed")
    func mpvHookHoldsAnInterruption() throws {
        let daemon = try startDaemon()
        let script = TestEnvironment.packageRoot.appendingPathComponent("hooks/mpv/audio-policyd.lua").path
        // The hook runs `command interrupt ...`: a wrapper points that at this daemon's socket.
        let runtime = URL(fileURLWithPath: daemon.socketPath).deletingLastPathComponent().path
        let wrapper = URL(fileURLWithPath: runtime).appendingPathComponent("interrupt-wrapper").path
        try "#!/bin/sh\nexec '\(TestEnvironment.daemonBinary)' \"$@\" --socket '\(daemon.socketPath)'\n"
            .write(toFile: wrapper, atomically: true, encoding: .utf8)
        chmod(wrapper, 0o755)
        let mpv = try startMPV(scripts: [script], options: ["audio-policyd-class=short", "audio-policyd-command=\(wrapper)"])
        func hooks() throws -> [StatusReport.Stream] { try daemon.status().streams.filter { $0.hook != nil } }
        try awaitStatus(daemon, "mpv's hook to hold a short interruption") { status in
            status.streams.contains { $0.hook != nil && $0.class == "short" && $0.application == "mpv" }
        }
        try SessionBus.playerctl(mpv.name, "pause")
        try awaitStatus(daemon, "the interruption released on pause") { $0.streams.allSatisfy { $0.hook == nil } }
        try SessionBus.playerctl(mpv.name, "play")
        try awaitStatus(daemon, "the interruption held again") { $0.streams.contains { $0.hook != nil } }
        mpv.kill()
        try awaitStatus(daemon, "the interruption released when mpv died") { $0.streams.allSatisfy { $0.hook == nil } }
        #expect(try hooks().isEmpty)
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }
}
