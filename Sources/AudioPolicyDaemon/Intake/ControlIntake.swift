import AudioPolicy
import ControlProtocol
import FoundationEssentials
import Logging
import SessionBus

/// Requests on the control socket, as engine events and replies: `status`; interruptions begun and
/// ended by hooks (`begin`, `end`); a hook that claims Now Playing (`claim`, `playback`); event lines
/// (`subscribe`); media keys for the Now Playing owner (`command`); the window that has focus, from a
/// desktop's script (`focus`).
///
/// It owns which interruptions each connection began, so that a connection that goes away ends its
/// own (no stuck ducks).
final class ControlIntake {
    var log: Logger
    private unowned let reading: any EngineReading
    private let players: MediaPlayers
    private let publication: Publication
    private let outbox: ControlOutbox
    /// Tells the engine (``Daemon/feed(_:)``).
    var feed: (Event) -> Void = { _ in }
    /// The sound server's name for `status` (nil while not connected).
    var serverName: () -> String? = { nil }

    /// Interruptions begun over the control socket, by client.
    private var hooksByClient: [ControlServer.ClientID: Set<StreamID>] = [:]
    /// Interruptions asked to wait for a call to end, not begun yet (their hooks hear `began` when they do).
    private var awaitingCall: Set<StreamID> = []
    /// The interruption whose `begin` is being answered: beginning at once, its reply says so.
    private var answering: StreamID?
    private var nextHook = 1

    init(log: Logger, reading: any EngineReading, players: MediaPlayers, publication: Publication,
         outbox: ControlOutbox) {
        self.log = log
        self.reading = reading
        self.players = players
        self.publication = publication
        self.outbox = outbox
    }

    /// Answers one request line with one reply line.
    func handleRequest(_ line: String, from client: ControlServer.ClientID) -> String {
        // Event lines this request causes for this client wait until its reply is out.
        outbox.beginReply(to: client)
        defer { outbox.endReply() }
        let reply: ControlReply
        if JSONNesting.isTooDeep(line.utf8) {
            // Refused before the decoder sees it (it traps on some of these); so is its id.
            reply = Self.malformed(JSONNesting.reason, id: nil)
        } else {
            do {
                let request = try JSONDecoder().decode(ControlRequest.self, from: Data(line.utf8))
                reply = respond(to: request, from: client)
            } catch {
                reply = Self.malformed(Self.describe(error, in: line), id: Self.salvageID(line))
            }
        }
        return ControlOutbox.encode(reply)
    }

    /// The error reply to a line that is not a request, saying why and what one looks like.
    private static func malformed(_ reason: String, id: JSONValue?) -> ControlReply {
        .failure(id, "malformed request: \(reason); expected one JSON object per line, e.g. {\"id\":1,\"op\":\"status\"}")
    }

    /// The `id` of a request that could not be decoded as a whole, so that even its error reply can
    /// be matched to it (decoded as requests decode it, so it is echoed the same way).
    private static func salvageID(_ line: String) -> JSONValue? {
        struct IDOnly: Decodable { var id: JSONValue? }
        return (try? JSONDecoder().decode(IDOnly.self, from: Data(line.utf8)))?.id
    }

    private func respond(to request: ControlRequest, from client: ControlServer.ClientID) -> ControlReply {
        switch request.op {
        case .status:
            return ControlReply(id: request.id, ok: true, status: publication.status(server: serverName()))
        case .begin:
            return begin(request, from: client)
        case .end:
            if let token = request.token, players.claims[client]?.token.rawValue == token {
                players.endClaim(of: client)
                return ControlReply(id: request.id, ok: true)
            }
            // The wire carries the printed token: it is looked up among this connection's, not parsed.
            guard let text = request.token, let token = hooksByClient[client]?.first(where: { $0.rawValue == text }) else {
                return .failure(request.id, "end needs the \"token\" of an interruption this connection began "
                    + "(or of its claim)")
            }
            hooksByClient[client]?.remove(token)
            awaitingCall.remove(token)
            feed(.interruptionEnded(token: token))
            return ControlReply(id: request.id, ok: true)
        case .claim:
            return claim(request, from: client)
        case .playback:
            return playback(request, from: client)
        case .subscribe:
            return subscribe(request, from: client)
        case .command:
            guard let command = request.command else {
                return .failure(request.id, "command needs \"command\": one of "
                    + NowPlayingPlayer.forwarded.sorted().joined(separator: ", "))
            }
            switch publication.nowPlaying.send(command) {
            case let .success(target): return ControlReply(id: request.id, ok: true, sentTo: target)
            case let .failure(refusal): return .failure(request.id, refusal.description)
            }
        case .focus:
            // Neither pid nor app: no window has focus (the desktop).
            let app = request.pid.map { AppIdentity(process: Int($0), name: request.app) }
                ?? request.app.map { AppIdentity(name: $0) }
            if request.lastWindowClosed == true {
                guard let app else { return .failure(request.id, "lastWindowClosed needs \"pid\" or \"app\"") }
                feed(.lastWindowClosed(app))
            } else {
                feed(.focus(app))
            }
            return ControlReply(id: request.id, ok: true)
        case let .unknown(name):
            return .failure(request.id, "unknown op \"\(name)\"; known: \(ControlRequest.Op.knownList)")
        }
    }

    private func begin(_ request: ControlRequest, from client: ControlServer.ClientID) -> ControlReply {
        let policy = reading.engine.policy
        guard let className = request.class else {
            return .failure(request.id, "begin needs \"class\" (one of: \(policy.classes.keys.sorted().joined(separator: ", ")))")
        }
        guard policy.interruptionClass(named: className) != nil else {
            return .failure(request.id, "unknown class \"\(className)\"; defined classes: "
                + policy.classes.keys.sorted().joined(separator: ", "))
        }
        var properties = request.properties ?? [:]
        if let app = request.app { properties["application.name"] = app }
        let token = StreamID(.hook(client: client, number: nextHook))
        nextHook += 1
        hooksByClient[client, default: []].insert(token)
        guard request.waitForCall == true else {
            feed(.interruptionBegan(token: token, className: className, properties))
            return ControlReply(id: request.id, ok: true, token: token.rawValue)
        }
        // The engine says whether a call is on: it begins the interruption at once (``began(_:)`` while
        // this is answered) or when the call is over.
        awaitingCall.insert(token)
        answering = token
        defer { answering = nil }
        feed(.interruptionAfterCall(token: token, className: className, properties))
        return ControlReply(id: request.id, ok: true, token: token.rawValue, delayed: awaitingCall.contains(token))
    }

    /// The engine began interruptions that waited for a call to end (``Command/interruptionBegan(_:)``): their
    /// hooks are told (`began`), unless the reply to their `begin` says it.
    func began(_ commands: [Command]) {
        for case let .interruptionBegan(token) in commands where awaitingCall.remove(token) != nil && token != answering {
            guard let client = hooksByClient.first(where: { $0.value.contains(token) })?.key else { continue }
            log.info("the call is over: interruption \(token) begins")
            outbox.send(ControlEvent(event: .began, token: token.rawValue), to: client)
        }
    }

    private func claim(_ request: ControlRequest, from client: ControlServer.ClientID) -> ControlReply {
        let pid = request.pid ?? request.properties?["application.process.id"].flatMap { Int32($0) }
            ?? outbox.server?.peerPID(of: client)
        var properties = request.properties ?? [:]
        if let app = request.app { properties["application.name"] = app }
        if let pid { properties["application.process.id"] = String(pid) }
        let application = properties["application.name"] ?? properties["application.process.binary"]
            ?? pid.map { "pid \($0)" } ?? "control client \(client)"
        let claim = players.claim(by: client, pid: pid, application: application, properties: properties)
        return ControlReply(id: request.id, ok: true, token: claim.token.rawValue)
    }

    private func playback(_ request: ControlRequest, from client: ControlServer.ClientID) -> ControlReply {
        guard players.claims[client] != nil else {
            return .failure(request.id, "playback reports the state of a player that claimed Now Playing on this "
                + "connection: send {\"op\":\"claim\"} first")
        }
        let names = [MPRISPlayer.Status.playing, .paused, .stopped]
        guard let text = request.status, let status = names.first(where: { $0.rawValue.lowercased() == text.lowercased() })
        else {
            return .failure(request.id, "playback needs \"status\": one of \(names.map(\.rawValue).joined(separator: ", "))")
        }
        players.claimStatus(of: client, status)
        return ControlReply(id: request.id, ok: true)
    }

    private func subscribe(_ request: ControlRequest, from client: ControlServer.ClientID) -> ControlReply {
        let kinds = request.events ?? ControlEvent.Kind.defaults
        let unknown = kinds.filter { !ControlEvent.Kind.subscribable.contains($0) }
        guard unknown.isEmpty, !kinds.isEmpty else {
            return .failure(request.id, "subscribe: unknown event kind(s) \(unknown.map { "\"\($0)\"" }.joined(separator: ", "))"
                + "; known: \(ControlEvent.Kind.subscribable.map(\.rawValue).joined(separator: ", "))")
        }
        publication.subscribe(client, to: kinds)
        return ControlReply(id: request.id, ok: true)
    }

    /// A client went away: the interruptions it began end with it (no stuck ducks), and so do its
    /// claim and subscription.
    func clientLeft(_ client: ControlServer.ClientID) {
        publication.clientLeft(client)
        outbox.clientLeft(client)
        players.endClaim(of: client)
        guard let tokens = hooksByClient.removeValue(forKey: client) else { return }
        for token in tokens.sorted() {
            awaitingCall.remove(token)
            log.info("control client gone: ending its interruption \(token)")
            feed(.interruptionEnded(token: token))
        }
    }

    private static func describe(_ error: Error, in line: String) -> String {
        switch error {
        case let DecodingError.dataCorrupted(context):
            // Foundation's decoder calls a number a field cannot hold (`"pid": 1e10`) "not valid JSON",
            // with no key: say what it is when the line is JSON after all.
            if context.codingPath.isEmpty, (try? JSONDecoder().decode(AnyJSON.self, from: Data(line.utf8))) != nil {
                return "a number out of range for its field (pid: a 32-bit process id, id: 64 bits or a double)"
            }
            return context.debugDescription
        case let DecodingError.keyNotFound(key, _): return "missing \"\(key.stringValue)\""
        case let DecodingError.typeMismatch(_, context):
            return "wrong type at \"\(context.codingPath.map(\.stringValue).joined(separator: "."))\""
        default: return "\(error)"
        }
    }
}

/// Any JSON value, decoded only to learn whether a text is JSON.
private struct AnyJSON: Decodable {
    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: Decoder) throws {
        if let object = try? decoder.container(keyedBy: Key.self) {
            for key in object.allKeys { _ = try object.decode(AnyJSON.self, forKey: key) }
        } else if var array = try? decoder.unkeyedContainer() {
            while !array.isAtEnd { _ = try array.decode(AnyJSON.self) }
        } else {
            let value = try decoder.singleValueContainer()
            if value.decodeNil() || (try? value.decode(Bool.self)) != nil || (try? value.decode(Double.self)) != nil {
                return
            }
            _ = try value.decode(String.self)
        }
    }
}
