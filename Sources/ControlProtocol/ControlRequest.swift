import AudioPolicy
import FoundationEssentials
import Glibc

/// One request on the control socket: a JSON object on one line.
///
/// ```json
/// {"id": 1, "op": "status"}
/// {"id": 2, "op": "begin", "class": "short", "app": "espeak", "properties": {"media.role": "assistant"}}
/// {"id": 2, "op": "begin", "class": "short", "app": "reminder", "waitForCall": true}
/// {"id": 3, "op": "end", "token": "hook-1-1"}
/// {"id": 4, "op": "claim", "app": "radio", "pid": 4242}
/// {"id": 5, "op": "playback", "status": "Paused"}
/// {"id": 6, "op": "subscribe", "events": ["stream", "now-playing"]}
/// {"id": 7, "op": "command", "command": "PlayPause"}
/// {"id": 8, "op": "focus", "pid": 4242}
/// {"id": 9, "op": "focus", "pid": 4242, "lastWindowClosed": true}
/// ```
public struct ControlRequest: Codable, Sendable {
    /// Echoed in the reply so a client can match replies to requests.
    public var id: JSONValue?
    public var op: Op
    /// `begin`: the interruption's class.
    public var `class`: String?
    /// `begin`: the application's name (sets `application.name`).
    public var app: String?
    /// `begin`: more stream-like properties (`media.role`, `application.process.id`, …).
    public var properties: [String: String]?
    /// `end`: the token `begin` or `claim` returned.
    public var token: String?
    /// `begin`: begin only once no call is on (Android's delayed audio focus). The reply says `delayed`
    /// when a call is on; a `began` event line with the token follows when it ends.
    public var waitForCall: Bool?
    /// `claim`: the player's process (default: the connecting process); its streams, and its child
    /// processes' streams, are the ones the daemon asks this connection to pause and resume.
    /// `focus`: the process of the window that has focus (with `app`, or neither: no window has).
    public var pid: Int32?
    /// `playback`: the claiming player's state, `Playing`, `Paused` or `Stopped` (as MPRIS spells it).
    public var status: String?
    /// `subscribe`: the kinds of event to receive (default: ``ControlEvent/Kind/defaults``).
    public var events: [ControlEvent.Kind]?
    /// `command`: a media key for the Now Playing owner, as MPRIS names it (`PlayPause`, `Next`, …).
    public var command: String?
    /// `focus`: not a focus change but the last window of the process (or app) named closing, which may
    /// pause the Now Playing app (`closed-window`).
    public var lastWindowClosed: Bool?

    public init(id: JSONValue? = nil, op: Op, class className: String? = nil, app: String? = nil,
                properties: [String: String]? = nil, token: String? = nil, pid: Int32? = nil,
                status: String? = nil, events: [ControlEvent.Kind]? = nil, command: String? = nil,
                waitForCall: Bool? = nil, lastWindowClosed: Bool? = nil) {
        self.id = id
        self.op = op
        self.class = className
        self.app = app
        self.properties = properties
        self.token = token
        self.pid = pid
        self.status = status
        self.events = events
        self.command = command
        self.waitForCall = waitForCall
        self.lastWindowClosed = lastWindowClosed
    }

    /// An operation: the request's `op`, its wire name the raw value.
    public enum Op: WireName {
        case status, begin, end, claim, playback, subscribe, command, focus
        /// An op the daemon does not understand (it replies `unknown op "…"`).
        case unknown(String)

        /// The operations the daemon understands.
        public static let known: [Op] = [.status, .begin, .end, .claim, .playback, .subscribe, .command, .focus]

        public var rawValue: String {
            switch self {
            case .status: "status"
            case .begin: "begin"
            case .end: "end"
            case .claim: "claim"
            case .playback: "playback"
            case .subscribe: "subscribe"
            case .command: "command"
            case .focus: "focus"
            case let .unknown(name): name
            }
        }
    }

    /// The request as one line (keys sorted), as clients send it.
    public func line() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}

/// The reply to one request: `{"id": …, "ok": true, "result": …}` or `{"id": …, "ok": false, "error": "…"}`.
public struct ControlReply: Codable, Sendable {
    public var id: JSONValue?
    public var ok: Bool
    public var error: String?
    public var status: StatusReport?
    public var token: String?
    /// `command`: whom the media key went to (the owner's player, or the hook that claimed Now Playing).
    public var sentTo: String?
    /// `begin` with `waitForCall`: a call is on, and the interruption waits for it to end (a `began` event
    /// line follows); false when it began at once.
    public var delayed: Bool?

    public static func failure(_ id: JSONValue?, _ message: String) -> ControlReply {
        ControlReply(id: id, ok: false, error: message)
    }

    public init(id: JSONValue?, ok: Bool, error: String? = nil, status: StatusReport? = nil, token: String? = nil,
                sentTo: String? = nil, delayed: Bool? = nil) {
        self.id = id
        self.ok = ok
        self.error = error
        self.status = status
        self.token = token
        self.sentTo = sentTo
        self.delayed = delayed
    }
}

/// A request id: whatever JSON scalar the client chose (a string, a number or a boolean; `null` is
/// the same as no id), echoed back exactly so that replies can be matched to requests.
public enum JSONValue: Codable, Hashable, Sendable {
    case number(Double)
    /// A whole number that fits in 64 bits: kept exactly (a `Double` would turn 2^53+1 into 2^53).
    case integer(Int64)
    case string(String)
    case bool(Bool)

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let integer = try? container.decode(Int64.self) {
            self = .integer(integer)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case let .number(number):
            if number == number.rounded(), abs(number) < 1e15 { try container.encode(Int(number)) } else {
                try container.encode(number)
            }
        case let .integer(integer): try container.encode(integer)
        case let .string(string): try container.encode(string)
        case let .bool(flag): try container.encode(flag)
        }
    }
}
