import ControlProtocol
import Foundation
import Testing
import TestRequirements

// The control socket's limits and odd clients (issue 13, README "Control socket"): a 10 MB line, a
// client that never writes, 200 at once, another user, a subscriber that never reads, a client that
// sends without reading, half-closed connections, and requests at the edges of JSON. Each check has a
// control case that comes out the other way.

@Suite(
    "Control socket limits",
    .serialized,
    .needs(TestEnvironment.soundServerMissing)
)
final class ControlSocketLimitTests {
    let session: LiveSession

    init() throws {
        session = try LiveSession()
    }

    @Test("a 10 MB line: an error reply, the connection closed, others served meanwhile, no 10 MB buffered; a 60 KB line is answered (control)")
    func oversizedLine() throws {
        let daemon = try session.startDaemon()
        let before = try daemon.residentKiB
        let connection = try ControlConnection(path: daemon.socketPath)
        // The writer blocks once the daemon stops reading: it runs on its own thread.
        let huge = [UInt8](#"{"id":1,"op":"status","pad":""#.utf8) + [UInt8](repeating: UInt8(ascii: "a"), count: 10_000_000)
        let writer = Thread { _ = try? connection.send(bytes: huge + Array("\"}\n".utf8)) }
        writer.start()
        let reply = try ControlSocketFuzzTests.object(connection.readLine())
        #expect(reply["ok"] as? Bool == false && (reply["error"] as? String)?.contains("longer than 65536") == true, "\(reply)")
        #expect(try connection.readToEnd().isEmpty, "the connection stayed open after the over-long line")
        let other = try daemon.status()
        #expect(other.server != nil)
        let after = try daemon.residentKiB
        #expect(after - before < 4 * 1024, "RSS grew from \(before) KiB to \(after) KiB on a 10 MB line")
        try daemon.awaitLog("request line over 65536 bytes")

        let control = try ControlConnection(path: daemon.socketPath)
        let padded = #"{"id":2,"op":"status","pad":""# + String(repeating: "a", count: 60_000) + #""}"#
        let answered = try ControlSocketFuzzTests.object(control.request(padded))
        #expect(answered["ok"] as? Bool == true && answered["id"] as? Int == 2, "a 60 KB line: \(answered)")
        #expect(try ControlSocketFuzzTests.object(control.request(#"{"id":3,"op":"status"}"#))["ok"] as? Bool == true)
    }

    @Test("a client that never writes blocks no one; 200 clients at once are all answered; the silent one is answered when it asks (control)")
    func idleAndCrowd() throws {
        let daemon = try session.startDaemon()
        let idle = try ControlConnection(path: daemon.socketPath)
        // All 200 connect before any writes; then all write; then all read.
        let crowd = try (0..<200).map { _ in try ControlConnection(path: daemon.socketPath, timeout: 20) }
        for (number, client) in crowd.enumerated() { try client.send(#"{"id":\#(number),"op":"status"}"#) }
        var answered = 0
        for (number, client) in crowd.enumerated() {
            let reply = try ControlSocketFuzzTests.object(client.readLine())
            if reply["ok"] as? Bool == true, reply["id"] as? Int == number { answered += 1 }
        }
        #expect(answered == 200, "\(answered) of 200 clients answered")
        #expect(try idle.readLine(within: 0.2) == nil, "the silent client was sent something unasked")
        let late = try ControlSocketFuzzTests.object(idle.request(#"{"id":"late","op":"status"}"#))
        #expect(late["ok"] as? Bool == true && late["id"] as? String == "late", "\(late)")
    }

    @Test("a client that sends without reading slows only itself: others are answered at once, and it gets every reply once it reads (control)")
    func senderThatNeverReads() throws {
        let daemon = try session.startDaemon()
        let greedy = try ControlConnection(path: daemon.socketPath, timeout: 20)
        // One reply first, for its size.
        let replyBytes = try greedy.request(#"{"id":1,"op":"status"}"#).utf8.count + 1
        // Far more replies than the socket buffers hold: the old server blocked in write(2) here.
        var sent = 0
        let request = Array(#"{"id":1,"op":"status"}"#.utf8) + [UInt8(ascii: "\n")]
        let until = Date().addingTimeInterval(2)
        while Date() < until, sent < 20_000 {
            if greedy.sendNow(request) == request.count { sent += 1 } else { Thread.sleep(forTimeInterval: 0.01) }
        }
        // Counted in bytes owed, not requests: how many requests the buffers take depends on the size of
        // a status reply (the policy's files and settings made it grow, and a fixed 1,000 stopped holding).
        let owed = sent * replyBytes
        #expect(owed > 4 * ControlServer.readPause, "only \(sent) requests of \(replyBytes)-byte replies (\(owed) bytes) could be sent")
        // Answered while the greedy client still reads nothing: the old server never answered them until it
        // did (no bound on the time here; a loaded machine is slow, not wrong).
        for index in 0..<5 {
            let reply = try ControlConnection(path: daemon.socketPath, timeout: 20).request(#"{"id":"other","op":"status"}"#)
            #expect(reply.contains(#""ok":true"#), "client \(index) was not answered properly: \(reply.prefix(200))")
        }
        // The greedy client reads now: a reply for every request, none dropped.
        var replies = 0
        while replies < sent, let line = try greedy.readLine(within: 5) {
            if line.contains(#""ok":true"#) { replies += 1 }
        }
        #expect(replies == sent, "\(replies) replies to \(sent) requests")
    }

    @Test("a subscriber that never reads is disconnected at 1 MiB unsent, the daemon's memory bounded; one that reads stays (control)")
    func subscriberThatNeverReads() throws {
        let daemon = try session.startDaemon()
        let before = try daemon.residentKiB
        let stuck = try ControlConnection(path: daemon.socketPath)
        #expect(try ControlSocketFuzzTests.object(stuck.request(#"{"id":1,"op":"subscribe"}"#))["ok"] as? Bool == true)
        let reader = try ControlConnection(path: daemon.socketPath)
        #expect(try ControlSocketFuzzTests.object(reader.request(#"{"id":1,"op":"subscribe"}"#))["ok"] as? Bool == true)
        let drained = Drain(reader)
        // Each begin and end is a stream event of about 10 KB (the app name) for every subscriber.
        let hooks = try ControlConnection(path: daemon.socketPath)
        let name = String(repeating: "x", count: 10_000)
        let mark = daemon.logCount
        for number in 0..<300 {
            let began = try ControlSocketFuzzTests.object(hooks.request(#"{"id":\#(number),"op":"begin","class":"short","app":"\#(name)"}"#))
            let token = try #require(began["token"] as? String, "\(began)")
            _ = try hooks.request(#"{"id":\#(number),"op":"end","token":"\#(token)"}"#)
        }
        try daemon.awaitLog("over the 1048576-byte limit; disconnected", after: mark)
        #expect(daemon.log[mark...].filter { $0.contains("over the 1048576-byte limit") }.count == 1,
                "not exactly the one stuck subscriber was dropped:\n\(daemon.log[mark...].joined(separator: "\n"))")
        let after = try daemon.residentKiB
        #expect(after - before < 16 * 1024, "RSS grew from \(before) KiB to \(after) KiB")
        // The stuck subscriber finds its connection closed once it reads; the reader is still served.
        #expect(try stuck.readToEnd().count < 1_000, "the stuck subscriber got more than the socket buffers held")
        let lines = drained.stop()
        #expect(lines > 600, "the reading subscriber got \(lines) event lines for 300 begin/end pairs")
        try reader.send(#"{"id":"still","op":"status"}"#)
        var answered = false
        while !answered, let line = try reader.readLine(within: 5) { answered = line.contains(#""id":"still""#) }
        #expect(answered, "the reading subscriber was not answered after the flood")
        #expect(try daemon.status().server != nil)
    }

    @Test("a client of another user is refused by its credentials (SO_PEERCRED), with a log line, even past a loosened socket mode; the daemon's own user is served (control)",
          .needs(getuid() == 0 ? nil : "needs root, to connect as another user with setpriv"))
    func otherUser() throws {
        let daemon = try session.startDaemon()
        // Past the filesystem's check (folder 0700, socket 0600), so that the credential check is what answers.
        #expect(chmod(daemon.folder.path, 0o711) == 0 && chmod(daemon.socketPath, 0o666) == 0)
        let status = [TestEnvironment.daemonBinary, "status", "--json", "--socket", daemon.socketPath]
        let mark = daemon.logCount
        #expect {
            try run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + status)
        } throws: { error in
            "\(error)".contains("refused: this daemon serves only its own user")
        }
        let line = try daemon.awaitLog("control socket: refused uid 65534", after: mark)
        #expect(line.contains("only uid \(getuid())"), "\(line)")

        // The daemon's own user, through the same setpriv and the same loosened socket: served.
        let same = try run(["setpriv", "--reuid=\(getuid())", "--regid=\(getgid())", "--clear-groups"] + status)
        #expect(same.contains("\"streams\""), "\(same)")
        #expect(daemon.log[mark...].filter { $0.contains("refused") }.count == 1)
    }

    @Test("a client that writes its requests and closes without reading: each is carried out, not only the first; a request that fails begins nothing (control)")
    func closesWithoutReading() throws {
        let daemon = try session.startDaemon()
        // A script's way: status (whose reply finds the socket closed), then a begin, then gone. The begin
        // is carried out, and ends at once with its connection.
        let mark = daemon.logCount
        let script = try ControlConnection(path: daemon.socketPath)
        try script.send(bytes: Array((#"{"id":1,"op":"status"}"# + "\n" + #"{"id":2,"op":"begin","class":"short","app":"script"}"#
            + "\n" + #"{"id":3,"op":"begin","class":"short","app":"script-2"}"# + "\n").utf8))
        script.close()
        let first = try daemon.awaitLog("control client gone: ending its interruption", after: mark)
        try daemon.awaitLog("control client gone: ending its interruption", after: (daemon.log.firstIndex(of: first) ?? mark) + 1)
        #expect(daemon.log[mark...].filter { $0.contains("control client gone: ending its interruption") }.count == 2,
                "\(daemon.log[mark...])")

        // Control: the same, its begins for a class that does not exist: nothing begun, nothing ended. The
        // daemon reads it before a later client's begin (its data waits since before that client connected).
        let control = daemon.logCount
        let failing = try ControlConnection(path: daemon.socketPath)
        try failing.send(bytes: Array((#"{"id":1,"op":"status"}"# + "\n" + #"{"id":2,"op":"begin","class":"no-such-class"}"#
            + "\n").utf8))
        failing.close()
        let later = try ControlConnection(path: daemon.socketPath)
        try later.send(#"{"id":1,"op":"begin","class":"short","app":"later"}"#)
        later.close()
        try daemon.awaitLog("control client gone: ending its interruption", after: control)
        #expect(daemon.log[control...].filter { $0.contains("control client gone: ending its interruption") }.count == 1,
                "\(daemon.log[control...])")
        #expect(daemon.isRunning)
    }

    @Test("half-closed: a request then shutdown(SHUT_WR) is answered, so is an unfinished last line, then the daemon closes; a connection left open stays open (control)")
    func halfClosed() throws {
        let daemon = try session.startDaemon()
        let half = try ControlConnection(path: daemon.socketPath)
        try half.send(bytes: Array((#"{"id":1,"op":"status"}"# + "\n" + #"{"id":2,"op":"status"}"#).utf8))
        half.closeWriting()
        let lines = try half.readToEnd().map { try ControlSocketFuzzTests.object($0) }
        #expect(lines.map { $0["id"] as? Int } == [1, 2] && lines.allSatisfy { $0["ok"] as? Bool == true }, "\(lines)")

        let open = try ControlConnection(path: daemon.socketPath)
        #expect(try ControlSocketFuzzTests.object(open.request(#"{"id":3,"op":"status"}"#))["ok"] as? Bool == true)
        #expect(try open.readLine(within: 0.5) == nil, "the daemon closed or wrote to a connection left open")
    }

    @Test("requests at the edges of JSON get the reply they should, on one connection that stays usable",
          arguments: JSONEdge.all)
    func edges(_ edge: JSONEdge) throws {
        let daemon = try session.startDaemon()
        let connection = try ControlConnection(path: daemon.socketPath)
        try connection.send(bytes: edge.line + [UInt8(ascii: "\n")])
        let text = try connection.readLine()
        let reply = try ControlSocketFuzzTests.object(text)
        #expect(reply["ok"] as? Bool == edge.ok, "\(edge.name): \(text)")
        if !edge.ok { #expect((reply["error"] as? String)?.isEmpty == false, "\(edge.name): \(text)") }
        if let id = edge.echoedID { #expect(text.contains(#""id":\#(id)"#), "\(edge.name): id \(id) not echoed: \(text)") }
        if let error = edge.error { #expect(text.contains(error), "\(edge.name): \(text)") }
        #expect(try ControlSocketFuzzTests.object(connection.request(#"{"id":9,"op":"status"}"#))["ok"] as? Bool == true,
                "\(edge.name): the connection is no longer usable")
        #expect(daemon.isRunning)
    }
}

/// A request at an edge of JSON and the reply it must get.
struct JSONEdge: CustomTestStringConvertible, Sendable {
    var name: String
    var line: [UInt8]
    var ok: Bool
    /// The raw JSON the reply's `id` must be, if any.
    var echoedID: String? = nil
    /// Text the reply must contain.
    var error: String? = nil

    var testDescription: String { name }

    static func text(_ name: String, _ line: String, ok: Bool, id: String? = nil, error: String? = nil) -> JSONEdge {
        JSONEdge(name: name, line: Array(line.utf8), ok: ok, echoedID: id, error: error)
    }

    static let all: [JSONEdge] = [
        text("id number (control)", #"{"id":7,"op":"status"}"#, ok: true, id: "7"),
        text("id string", #"{"id":"seven","op":"status"}"#, ok: true, id: #""seven""#),
        text("id true", #"{"id":true,"op":"status"}"#, ok: true, id: "true"),
        text("id false on an error", #"{"id":false,"op":"nope"}"#, ok: false, id: "false"),
        text("id 2^53+1, exactly", #"{"id":9007199254740993,"op":"status"}"#, ok: true, id: "9007199254740993"),
        text("id 1.5", #"{"id":1.5,"op":"status"}"#, ok: true, id: "1.5"),
        text("id null", #"{"id":null,"op":"status"}"#, ok: true),
        text("id an array", #"{"id":[1],"op":"status"}"#, ok: false, error: #"wrong type at \"id\""#),
        text("id an object", #"{"id":{"a":1},"op":"status"}"#, ok: false),
        text("id 1e400", #"{"id":1e400,"op":"status"}"#, ok: false),
        text("pid 1e10", #"{"id":1,"op":"claim","pid":1e10}"#, ok: false, id: "1", error: "out of range"),
        text("a 400-digit number", #"{"id":1,"op":"status","x":"# + String(repeating: "9", count: 400) + "}", ok: true, id: "1"),
        text("unknown op", #"{"id":1,"op":"reboot"}"#, ok: false, id: "1", error: "unknown op"),
        text("no op", #"{"id":1}"#, ok: false, id: "1", error: #"missing \"op\""#),
        text("begin without class", #"{"id":1,"op":"begin"}"#, ok: false, id: "1", error: "begin needs"),
        text("end without token", #"{"id":1,"op":"end"}"#, ok: false, id: "1", error: "end needs"),
        text("not an object", #"[1,2]"#, ok: false),
        text("an escaped NUL in op", #"{"id":1,"op":"sta\u0000tus"}"#, ok: false, id: "1", error: "unknown op"),
        JSONEdge(name: "a raw NUL", line: Array(#"{"id":1,"op":"#.utf8) + [0] + Array(#""status"}"#.utf8), ok: false),
        JSONEdge(name: "not UTF-8 in a string", line: Array(#"{"id":"#.utf8) + [0x22, 0xFF, 0x22] + Array(#","op":"status"}"#.utf8),
                 ok: false, error: "not UTF-8"),
        JSONEdge(name: "UTF-8 in a string (control)", line: Array(#"{"id":"é","op":"status"}"#.utf8), ok: true,
                 echoedID: #""é""#),
        JSONEdge(name: "an encoded surrogate (CESU)", line: Array(#"{"id":""#.utf8) + [0xED, 0xA0, 0x80] + Array(#"","op":"status"}"#.utf8),
                 ok: false, error: "not UTF-8"),
        text("a lone surrogate escape", #"{"id":"\ud800","op":"status"}"#, ok: false),
        text("30,000 nested arrays", #"{"id":1,"op":"status","x":"# + String(repeating: "[", count: 30_000)
            + String(repeating: "]", count: 30_000) + "}", ok: false),
        // The fuzz's line that killed the daemon: Foundation's decoder traps on it (see JSONNesting).
        text("512 nested arrays, cut off", #"{"id":"# + String(repeating: "[", count: 512), ok: false, error: "nested more than 64"),
        text("64 deep, in a field it ignores (control)", #"{"id":1,"op":"status","x":"# + String(repeating: "[", count: 63)
            + String(repeating: "]", count: 63) + "}", ok: true, id: "1"),
        text("65 deep", #"{"id":1,"op":"status","x":"# + String(repeating: "[", count: 64)
            + String(repeating: "]", count: 64) + "}", ok: false, error: "nested more than 64"),
        text("brackets in a string are not nesting (control)", #"{"id":"# + "\"" + String(repeating: "[", count: 600)
            + #"\"[","op":"status"}"#, ok: true),
        text("6,000 nested objects", String(repeating: #"{"a":"#, count: 6_000) + "1" + String(repeating: "}", count: 6_000), ok: false),
    ]
}

/// Reads a connection on a thread of its own, as fast as it can, counting lines, until stopped.
final class Drain: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private var running = true
    private let done = DispatchSemaphore(value: 0)

    init(_ connection: ControlConnection) {
        Thread.detachNewThread { [self] in
            while lock.withLock({ running }) {
                let lines = connection.discardAvailable(within: 0.1)
                lock.withLock { count += lines }
            }
            done.signal()
        }
    }

    /// Stops reading; how many lines were read.
    func stop() -> Int {
        lock.withLock { running = false }
        done.wait()
        return lock.withLock { count }
    }
}

/// One thread may send while another reads (sending touches only the socket), and a connection may
/// be handed to a ``Drain``'s thread.
extension ControlConnection: @unchecked Sendable {}

extension ControlSocketFuzzTests {
    static func object(_ line: String) throws -> [String: Any] {
        let parsed = try JSONSerialization.jsonObject(with: Data(line.utf8))
        return try #require(parsed as? [String: Any], "not a JSON object: \(line)")
    }
}
