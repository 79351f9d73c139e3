import ControlProtocol
import FoundationEssentials

/// Event lines on their way to control clients, in order with replies.
///
/// A line caused by a client's own request waits until that request's reply is out, so a client always
/// reads its reply before the events it set off. Both publication (subscribers) and the players (a
/// hook that claimed Now Playing is told to pause) send through here.
final class ControlOutbox {
    /// The control socket, once it is open.
    var server: ControlServer?
    /// The client whose request is being handled.
    private var replyingTo: ControlServer.ClientID?
    private var heldBack: [ControlServer.ClientID: [String]] = [:]

    /// Lines for `client` wait from now until ``replied(to:)``.
    func beginReply(to client: ControlServer.ClientID) {
        replyingTo = client
    }

    /// The request is handled; its reply is about to be queued.
    func endReply() {
        replyingTo = nil
    }

    /// The reply to `client`'s request is out: the event lines its request caused follow it.
    func replied(to client: ControlServer.ClientID) {
        if replyingTo == client { replyingTo = nil }
        guard let lines = heldBack.removeValue(forKey: client) else { return }
        for line in lines { server?.send(line, to: client) }
    }

    /// The connection closed: nothing more is sent to it.
    func clientLeft(_ client: ControlServer.ClientID) {
        heldBack[client] = nil
        if replyingTo == client { replyingTo = nil }
    }

    func send(_ event: ControlEvent, to client: ControlServer.ClientID) {
        send(Self.encode(event), to: client)
    }

    func send(_ line: String, to client: ControlServer.ClientID) {
        if replyingTo == client {
            heldBack[client, default: []].append(line)
        } else {
            server?.send(line, to: client)
        }
    }

    static func encode(_ event: ControlEvent) -> String {
        encode(event, fallback: #"{"event":"error","error":"internal: event could not be encoded"}"#)
    }

    static func encode(_ reply: ControlReply) -> String {
        encode(reply, fallback: #"{"ok":false,"error":"internal: reply could not be encoded"}"#)
    }

    /// One JSON line as docs/control-socket.md documents the wire: keys sorted, slashes as they are.
    private static func encode(_ value: some Encodable, fallback: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? fallback
    }
}
