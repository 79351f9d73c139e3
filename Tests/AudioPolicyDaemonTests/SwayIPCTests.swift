import AudioPolicy
@testable import AudioPolicyDaemon
import Foundation
import Testing

/// The sway/i3 focus source's reading of the IPC stream, on bytes recorded from a real sway 1.7
/// (headless, Tests/Recordings/sway-focus.ipc): the replies to SUBSCRIBE and GET_TREE, then the events
/// while a second mpv window opened, focus moved between the two, to an empty workspace and back, and
/// the focused window closed. The real source on a real sway is SwayFocusTests.
@Suite struct SwayIPCTests {
    static let recording = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Recordings/sway-focus.ipc")
    static let game = AppIdentity(pid: 18647, name: "swaygame")
    static let other = AppIdentity(pid: 18751, name: "swayother")
    /// What the recorded session means: the game focused when we subscribed; the other window opens
    /// with focus; game, other; workspace 2 (empty: no window has focus), back to 1 (the other window);
    /// the other window closes (focus lost: its app's last window), and sway gives the game focus.
    static let expected: [Event] = [
        .focus(game), .focus(other), .focus(game), .focus(other), .focus(nil), .focus(other),
        .lastWindowClosed(other), .focus(game),
    ]

    @Test("the recorded stream, read whole or cut in pieces of any size, gives the same focus events",
          arguments: [1, 7, 14, 100, 4096, 1 << 20])
    func recordedStream(chunk: Int) throws {
        let bytes = try [UInt8](Data(contentsOf: Self.recording))
        var buffer: [UInt8] = []
        var reader = SwayFocus.Reader()
        var events: [Event] = []
        var types: [UInt32] = []
        for start in stride(from: 0, to: bytes.count, by: chunk) {
            buffer += bytes[start..<min(bytes.count, start + chunk)]
            for message in try SwayIPCMessage.take(from: &buffer) {
                types.append(message.type)
                events += reader.events(for: message)
            }
        }
        #expect(buffer.isEmpty)
        #expect(types.prefix(2) == [SwayIPCMessage.subscribe, SwayIPCMessage.getTree])
        #expect(types.count == 14, "\(types)")
        #expect(events == Self.expected)
    }

    @Test("one of an app's two windows closing without focus, and a title change, say nothing; its last one closing says so (focused or not)")
    func closeOfUnfocusedWindow() {
        var reader = SwayFocus.Reader()
        func window(_ id: Int) -> String { #"{"id": \#(id), "type": "con", "pid": 1234, "app_id": "a", "focused": false}"# }
        func event(_ change: String, _ container: String) -> SwayIPCMessage {
            .init(type: SwayIPCMessage.windowEvent, json: #"{"change": "\#(change)", "container": \#(container)}"#)
        }
        #expect(reader.events(for: event("focus", #"{"id": 5, "type": "con", "pid": 99, "app_id": "b", "focused": true}"#))
            == [.focus(AppIdentity(pid: 99, name: "b"))])
        #expect(reader.events(for: event("new", window(9))) == [])
        #expect(reader.events(for: event("new", window(10))) == [])
        #expect(reader.events(for: event("close", window(9))) == [])
        #expect(reader.events(for: event("title", window(10))) == [])
        #expect(reader.events(for: event("close", window(10))) == [.lastWindowClosed(AppIdentity(pid: 1234, name: "a"))])
        #expect(reader.events(for: event("close", #"{"id": 5, "type": "con", "pid": 99, "app_id": "b", "focused": true}"#))
            == [.lastWindowClosed(AppIdentity(pid: 99, name: "b"))])
        #expect(reader.focused == nil)
    }

    @Test("a reply nested past the decoder's limit and cut off there says nothing and does not crash (control: a deep but whole tree within the limit is read)")
    func tooDeepTreeIsRefused() {
        var reader = SwayFocus.Reader()
        let cutOff = #"{"id": 1, "type": "root", "nodes": "# + String(repeating: "[", count: 512)
        #expect(reader.events(for: .init(type: SwayIPCMessage.getTree, json: cutOff)) == [])
        // 150 containers inside each other (300 levels), the innermost a focused window.
        var tree = #"{"id": 500, "type": "con", "pid": 77, "app_id": "deep", "focused": true, "nodes": []}"#
        for id in 0..<150 { tree = #"{"id": \#(id), "type": "con", "focused": false, "nodes": [\#(tree)]}"# }
        #expect(reader.events(for: .init(type: SwayIPCMessage.getTree, json: tree)) == [.focus(AppIdentity(pid: 77, name: "deep"))])
    }

    @Test("an i3 or Xwayland window (no pid, no app_id) is its X11 class")
    func xwaylandWindowIsItsClass() {
        var reader = SwayFocus.Reader()
        let event = #"{"change": "focus", "container": {"id": 7, "type": "con", "focused": true, "window_properties": {"class": "Firefox-esr"}}}"#
        #expect(reader.events(for: .init(type: SwayIPCMessage.windowEvent, json: event)) == [.focus(AppIdentity(name: "Firefox-esr"))])
    }

    @Test("encoding and taking back a message round-trips; a peer that is not i3 IPC is an error")
    func framing() throws {
        let message = SwayIPCMessage(type: SwayIPCMessage.subscribe, json: #"["window"]"#)
        #expect(Array(message.encoded.prefix(14)) == Array("i3-ipc".utf8) + [10, 0, 0, 0, 2, 0, 0, 0])
        var buffer = message.encoded + message.encoded.prefix(5)
        #expect(try SwayIPCMessage.take(from: &buffer) == [message])
        #expect(buffer.count == 5)
        var garbage = Array("HTTP/1.1 400 Bad Request\r\n".utf8)
        #expect(throws: SwayIPCMessage.Malformed.self) { try SwayIPCMessage.take(from: &garbage) }
    }
}
