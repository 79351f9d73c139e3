import AudioPolicy
import ControlProtocol
import FoundationEssentials
import Glibc
import Logging
import SoundServer

/// Requests on the control socket: `status`, and interruptions begun and ended by hooks (the other
/// hooks, `claim`, `playback` and `subscribe`, are in Daemon+Hooks).
extension Daemon {
    func handleRequest(_ line: String, from client: ControlServer.ClientID) -> String {
        // Event lines this request causes for this client wait until its reply is out.
        media.replyingTo = client
        defer { media.replyingTo = nil }
        let reply: ControlReply
        do {
            let request = try JSONDecoder().decode(ControlRequest.self, from: Data(line.utf8))
            reply = respond(to: request, from: client)
        } catch {
            reply = .failure(Self.salvageID(line), "malformed request: \(Self.describe(error, in: line)); expected one JSON "
                + "object per line, e.g. {\"id\":1,\"op\":\"status\"}")
        }
        return Self.encode(reply)
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
            return ControlReply(id: request.id, ok: true, status: status())
        case .begin:
            guard let className = request.class else {
                return .failure(request.id, "begin needs \"class\" (one of: \(engine.policy.classes.keys.sorted().joined(separator: ", ")))")
            }
            guard engine.policy.interruptionClass(named: className) != nil else {
                return .failure(request.id, "unknown class \"\(className)\"; defined classes: "
                    + engine.policy.classes.keys.sorted().joined(separator: ", "))
            }
            var properties = request.properties ?? [:]
            if let app = request.app { properties["application.name"] = app }
            let token = StreamID("hook-\(client)-\(nextHook)")
            nextHook += 1
            hooksByClient[client, default: []].insert(token)
            feed(.interruptionBegan(token: token, className: className, properties))
            return ControlReply(id: request.id, ok: true, token: token.rawValue)
        case .end:
            if let token = request.token, media.claims[client]?.token.rawValue == token {
                endClaim(of: client)
                return ControlReply(id: request.id, ok: true)
            }
            guard let token = request.token.map({ StreamID($0) }), hooksByClient[client]?.contains(token) == true else {
                return .failure(request.id, "end needs the \"token\" of an interruption this connection began "
                    + "(or of its claim)")
            }
            hooksByClient[client]?.remove(token)
            feed(.interruptionEnded(token: token))
            return ControlReply(id: request.id, ok: true)
        case .claim:
            return claimRequest(request, from: client)
        case .playback:
            return playbackRequest(request, from: client)
        case .subscribe:
            return subscribeRequest(request, from: client)
        case let .unknown(name):
            return .failure(request.id, "unknown op \"\(name)\"; known: \(ControlRequest.Op.knownList)")
        }
    }

    /// A client went away: the interruptions it began end with it (no stuck ducks), and so do its
    /// claim and subscription.
    func clientLeft(_ client: ControlServer.ClientID) {
        hooksClientLeft(client)
        guard let tokens = hooksByClient.removeValue(forKey: client) else { return }
        for token in tokens.sorted() {
            log.info("control client gone: ending its interruption \(token)")
            feed(.interruptionEnded(token: token))
        }
    }

    func status() -> StatusReport {
        let rows = statusRows()
        return StatusReport(
            nowPlaying: nowPlayingReport(),
            streams: rows, policy: engine.policy.source, server: serverName, decisions: decisions.recent)
    }

    /// Every stream (and hook interruption) the engine tracks, as `status` shows it.
    func statusRows() -> [StatusReport.Stream] {
        let at = now
        return engine.snapshot(at: at).map { status -> StatusReport.Stream in
            let index = UInt32(status.id)
            let live = index.flatMap { streams[$0] }
            return StatusReport.Stream(
                index: status.isHook ? nil : index, application: status.application,
                pid: live?.input.properties["application.process.id"].flatMap { Int($0) },
                role: status.role, class: status.className, state: status.state, factor: status.factor,
                muted: status.muted, spoken: status.spoken, rule: status.reason,
                hook: status.isHook ? status.id : nil, volume: live?.ownVolume.averageLinear,
                audible: status.isHook ? nil : status.audible, measured: status.isHook ? nil : status.measured,
                target: status.target, settles: Int(status.settlesAt))
        }
    }

    static func encode(_ reply: ControlReply) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(reply)).map { String(decoding: $0, as: UTF8.self) }
            ?? #"{"ok":false,"error":"internal: reply could not be encoded"}"#
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
