import AudioPolicy
@testable import AudioPolicyDaemon
import EventLoop
import Foundation
import FoundationGaps
import Logging
import Testing

/// The sway/i3 focus source against a fake compositor: a listening socket this test answers by hand, on
/// a real main loop. What it asks for, a reply cut mid-header, the compositor going away and a peer that
/// is not i3 IPC. (The real sway is SwayFocusTests.)
@Suite(.serialized) struct SwayFocusPeerTests {
    @Test("it subscribes and asks for the tree; the tree's focused window, then events in any cut, then the end: focus unknown")
    func talksToAPeer() throws {
        let peer = try FakeCompositor()
        let loop = MainLoop()
        var events: [Event] = []
        let source = try #require(SwayFocus(loop: loop, log: Logger(label: "test"), environment: ["SWAYSOCK": peer.path]) {
            events.append($0)
        })
        let asked = try peer.read(messages: 2)
        #expect(asked == [SwayIPCMessage(type: SwayIPCMessage.subscribe, json: #"["window","workspace"]"#),
                          SwayIPCMessage(type: SwayIPCMessage.getTree)])
        peer.write(SwayIPCMessage(type: SwayIPCMessage.subscribe, json: #"{"success": true}"#).encoded)
        peer.write(SwayIPCMessage(type: SwayIPCMessage.getTree, json: """
            {"id": 1, "type": "root", "focused": false, "nodes": [{"id": 3, "type": "workspace", "focused": false,
             "nodes": [{"id": 7, "type": "con", "focused": true, "pid": 4242, "app_id": "game"}]}]}
            """).encoded)
        try iterate(loop) { events.count == 1 }
        #expect(events == [.focus(AppIdentity(pid: 4242, name: "game"))])

        let focus = SwayIPCMessage(type: SwayIPCMessage.windowEvent, json: """
            {"change": "focus", "container": {"id": 8, "type": "con", "focused": true, "pid": 5151, "app_id": "term"}}
            """).encoded
        peer.write(Array(focus.prefix(9)))
        try iterate(loop, until: Date() + 0.2) { false }
        #expect(events.count == 1, "half a header is no message yet")
        peer.write(Array(focus.dropFirst(9)))
        try iterate(loop) { events.count == 2 }
        #expect(events.last == .focus(AppIdentity(pid: 5151, name: "term")))

        peer.close()
        try iterate(loop) { events.count == 3 }
        #expect(events.last == .focusUnknown)
        withExtendedLifetime(source) {}
    }

    @Test("a peer that is not i3 IPC: focus unknown, and nothing read from it counts")
    func garbage() throws {
        let peer = try FakeCompositor()
        let loop = MainLoop()
        var events: [Event] = []
        let source = try #require(SwayFocus(loop: loop, log: Logger(label: "test"), environment: ["I3SOCK": peer.path]) {
            events.append($0)
        })
        _ = try peer.read(messages: 2)
        peer.write(Array("HTTP/1.1 400 Bad Request\r\n\r\n".utf8))
        try iterate(loop) { !events.isEmpty }
        #expect(events == [.focusUnknown])
        withExtendedLifetime(source) {}
    }

    @Test("control: no SWAYSOCK or I3SOCK, or a socket nobody listens on: no source")
    func noSocket() {
        let loop = MainLoop()
        #expect(SwayFocus(loop: loop, log: Logger(label: "test"), environment: [:]) { _ in } == nil)
        #expect(SwayFocus(loop: loop, log: Logger(label: "test"), environment: ["SWAYSOCK": "/nonexistent/sway.sock"]) { _ in } == nil)
    }

    /// Runs the loop until `done` or the deadline (then throws, unless a deadline was given to wait out).
    private func iterate(_ loop: MainLoop, until deadline: Date? = nil, _ done: () -> Bool) throws {
        let end = deadline ?? Date() + 5
        var expired = false
        let timer = MainLoop.Timer(loop: loop) { expired = true }
        timer.schedule(after: UInt64(max(0, end.timeIntervalSinceNow) * 1_000_000))
        while !done(), !expired { _ = loop.iterate() }
        if !done(), deadline == nil { throw CommandFailure("not done within 5 s") }
    }
}

private struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A listening Unix socket standing for sway: accepts the one client and reads and writes raw bytes.
private final class FakeCompositor {
    let path: String
    private let listener: Int32
    private var client: Int32 = -1
    private var buffer: [UInt8] = []

    init() throws {
        path = NSTemporaryDirectory() + "sway-fake-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        let address = try UnixSocketAddress(path: path)
        guard address.withSocketAddress({ bind(listener, $0, $1) }) == 0, listen(listener, 1) == 0 else {
            throw CommandFailure("bind \(path): \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        close()
        Glibc.close(listener)
        unlink(path)
    }

    /// Accepts the client (it connected already) and reads `messages` whole messages from it.
    func read(messages count: Int) throws -> [SwayIPCMessage] {
        if client < 0 { client = accept(listener, nil, nil) }
        var interval = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        var messages: [SwayIPCMessage] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while messages.count < count {
            let got = Glibc.read(client, &chunk, chunk.count)
            guard got > 0 else { throw CommandFailure("the source sent \(messages.count) of \(count) messages") }
            buffer += chunk[..<got]
            messages += try SwayIPCMessage.take(from: &buffer)
        }
        return messages
    }

    func write(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.write(client, $0.baseAddress, $0.count) }
    }

    func close() {
        if client >= 0 { Glibc.close(client) }
        client = -1
    }
}
