import AudioPolicy
import Foundation
import Testing

extension DaemonTests {
    @Test("control socket: a malformed line gets ok:false and the daemon keeps answering; begin/end duck and restore; a vanished client's interruption ends")
    func controlSocket() throws {
        let (music, own) = try startMusic()
        let daemon = try startDaemon()
        let before = try record().level(Tone.musicBand)
        let connection = try ControlConnection(path: daemon.socketPath)

        let malformed = try Self.object(connection.request("this is not json"))
        #expect(malformed["ok"] as? Bool == false, "\(malformed)")
        #expect((malformed["error"] as? String)?.isEmpty == false, "\(malformed)")
        let status = try Self.object(connection.request(#"{"id":2,"op":"status"}"#))
        #expect(status["ok"] as? Bool == true && status["id"] as? Int == 2, "the daemon stopped answering: \(status)")
        #expect(try daemon.status().server != nil, "a new connection is not answered")

        // begin (class short): the music ducks -14 dB; end: it comes back exactly.
        let began = try Self.object(connection.request(#"{"id":3,"op":"begin","class":"short","app":"assistant-hook"}"#))
        let token = try #require(began["token"] as? String, "\(began)")
        #expect(began["ok"] as? Bool == true && began["id"] as? Int == 3)
        let landed = Self.volume(own, at: -14)
        try awaitStream(music, "ducked to \(landed) by the hook") { Self.matches($0.volume, landed) }
        let during = try record().level(Tone.musicBand)
        #expect(abs(during - before + 14) <= 1, "the music played at \(during) dB during the hook, \(before) dB before")
        let hooks = try daemon.status().streams.filter { $0.hook != nil }
        #expect(hooks.map(\.class) == ["short"] && hooks.first?.application == "assistant-hook", "\(hooks)")

        let ended = try Self.object(connection.request(#"{"id":4,"op":"end","token":"\#(token)"}"#))
        #expect(ended["ok"] as? Bool == true, "\(ended)")
        try awaitStream(music, "back at exactly \(own) after end", timeout: 4) { $0.volume == own }
        let afterEnd = try record().level(Tone.musicBand)
        #expect(abs(afterEnd - before) <= 0.5, "the music played at \(afterEnd) dB after end, \(before) dB before")
        let again = try Self.object(connection.request(#"{"id":5,"op":"end","token":"\#(token)"}"#))
        #expect(again["ok"] as? Bool == false, "ending twice: \(again)")

        // A client that goes away without `end`: its interruption ends with it.
        var client: ControlConnection? = try ControlConnection(path: daemon.socketPath)
        let orphan = try Self.object(try #require(client).request(#"{"id":6,"op":"begin","class":"short"}"#))
        #expect(orphan["ok"] as? Bool == true, "\(orphan)")
        try awaitStream(music, "ducked by the second hook") { Self.matches($0.volume, landed) }
        let mark = daemon.logCount
        client = nil
        try daemon.awaitLog("control client gone: ending its interruption", after: mark)
        try awaitStream(music, "back at exactly \(own) after the client left", timeout: 4) { $0.volume == own }
        #expect(try daemon.status().streams.allSatisfy { $0.hook == nil })
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    static func object(_ line: String) throws -> [String: Any] {
        let parsed = try JSONSerialization.jsonObject(with: Data(line.utf8))
        return try #require(parsed as? [String: Any], "not a JSON object: \(line)")
    }
}
