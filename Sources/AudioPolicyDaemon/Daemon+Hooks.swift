import AudioPolicy
import ControlProtocol
import FoundationEssentials
import Glibc
import Logging
import SessionBus

/// Hooks on the control socket beyond `begin`/`end`: `claim` (a player without MPRIS takes Now Playing
/// and its commands over the socket), `playback` (its state), `subscribe` (event lines), and the
/// event lines themselves.
extension Daemon {
    // MARK: - Requests

    func claimRequest(_ request: ControlRequest, from client: ControlServer.ClientID) -> ControlReply {
        let pid = request.pid ?? request.properties?["application.process.id"].flatMap { Int32($0) }
            ?? control?.peerPID(of: client)
        var properties = request.properties ?? [:]
        if let app = request.app { properties["application.name"] = app }
        if let pid { properties["application.process.id"] = String(pid) }
        let application = properties["application.name"] ?? properties["application.process.binary"]
            ?? pid.map { "pid \($0)" } ?? "control client \(client)"
        let claim = MediaState.Claim(client: client, token: StreamID("claim-\(client)"),
                                     player: PlayerID("hook:\(client)"), pid: pid, application: application,
                                     status: media.claims[client]?.status)
        media.claims[client] = claim
        log.info("control client \(client): \(application) claims Now Playing (\(claim.token))")
        feed(.nowPlayingClaimed(claim.token, properties, player: claim.player))
        remapStreams()
        refreshNowPlaying()
        return ControlReply(id: request.id, ok: true, token: claim.token.rawValue)
    }

    func playbackRequest(_ request: ControlRequest, from client: ControlServer.ClientID) -> ControlReply {
        guard var claim = media.claims[client] else {
            return .failure(request.id, "playback reports the state of a player that claimed Now Playing on this "
                + "connection: send {\"op\":\"claim\"} first")
        }
        let names = [MPRISPlayer.Status.playing, .paused, .stopped]
        guard let text = request.status, let status = names.first(where: { $0.rawValue.lowercased() == text.lowercased() })
        else {
            return .failure(request.id, "playback needs \"status\": one of \(names.map(\.rawValue).joined(separator: ", "))")
        }
        claim.status = status
        media.claims[client] = claim
        for (index, player) in media.streamPlayers.sorted(by: { $0.key < $1.key }) where player == claim.player {
            feed(.playback(Self.streamID(index), playing: status == .playing))
        }
        refreshNowPlaying()
        return ControlReply(id: request.id, ok: true)
    }

    func subscribeRequest(_ request: ControlRequest, from client: ControlServer.ClientID) -> ControlReply {
        let kinds = request.events ?? ControlEvent.Kind.defaults
        let unknown = kinds.filter { !ControlEvent.Kind.subscribable.contains($0) }
        guard unknown.isEmpty, !kinds.isEmpty else {
            return .failure(request.id, "subscribe: unknown event kind(s) \(unknown.map { "\"\($0)\"" }.joined(separator: ", "))"
                + "; known: \(ControlEvent.Kind.subscribable.map(\.rawValue).joined(separator: ", "))")
        }
        media.subscribers[client] = Set(kinds)
        // Inputs first: a recorder learns of the streams before their states.
        if kinds.contains(.input) {
            for (at, event) in engine.prelude(at: now) {
                deliver(ControlEvent(event: .input, at: Int(at), input: FixtureEvent(event)), to: client)
            }
        }
        // Where things stand now, right after the reply; changes follow.
        if kinds.contains(.player) {
            for player in media.players?.players.values.sorted(by: { $0.busName < $1.busName }) ?? [] {
                deliver(ControlEvent(event: .player, player: playerInfo(player, present: true)), to: client)
            }
        }
        if kinds.contains(.stream) {
            for row in statusRows() {
                media.reportedStreams[Self.key(of: row)] = row
                deliver(ControlEvent(event: .stream, stream: row, at: Int(now)), to: client)
            }
        }
        if kinds.contains(.nowPlaying) {
            deliver(ControlEvent(event: .nowPlaying, nowPlaying: nowPlayingReport(), at: Int(now)), to: client)
        }
        return ControlReply(id: request.id, ok: true)
    }

    /// Ends the claim `client` made, if any (on `end` with its token, or when the connection closes).
    func endClaim(of client: ControlServer.ClientID) {
        guard let claim = media.claims.removeValue(forKey: client) else { return }
        log.info("control client \(client): claim \(claim.token) ended")
        feed(.playerGone(claim.player))
        remapStreams()
        refreshNowPlaying()
    }

    /// A connection closed: its subscription and claim end with it.
    func hooksClientLeft(_ client: ControlServer.ClientID) {
        media.subscribers[client] = nil
        media.heldBack[client] = nil
        if media.replyingTo == client { media.replyingTo = nil }
        endClaim(of: client)
    }

    func claim(of player: PlayerID) -> MediaState.Claim? {
        media.claims.values.first { $0.player == player }
    }

    // MARK: - Event lines

    /// Sends `event` to every subscriber that asked for its kind.
    func publish(_ event: ControlEvent) {
        guard !media.subscribers.isEmpty else { return }
        var event = event
        if event.at == nil { event.at = Int(now) }
        var line: String?
        for (client, kinds) in media.subscribers.sorted(by: { $0.key < $1.key }) where kinds.contains(event.event) {
            if line == nil { line = Self.encode(event) }
            if let line { deliver(line, to: client) }
        }
    }

    /// Sends what the engine is about to be told to `input` subscribers (`audio-policyd record`), before
    /// the stream and decision lines it causes.
    func publishInput(_ event: Event) {
        guard media.subscribers.values.contains(where: { $0.contains(.input) }),
              let input = FixtureEvent(event) else { return }
        publish(ControlEvent(event: .input, input: input))
    }

    func publish(_ decision: Decision) {
        guard media.subscribers.values.contains(where: { $0.contains(.decision) }) else { return }
        publish(ControlEvent(event: .decision, decision: ControlEvent.DecisionInfo(
            stream: decision.stream.rawValue, application: decision.application, class: decision.className,
            reason: decision.reason, action: decision.action, kind: decision.kind)))
    }

    /// Sends a pause, resume or remote command to the connection that claimed Now Playing.
    func sendToClaim(_ claim: MediaState.Claim, _ event: ControlEvent) {
        deliver(Self.encode(event), to: claim.client)
    }

    private func deliver(_ event: ControlEvent, to client: ControlServer.ClientID) {
        deliver(Self.encode(event), to: client)
    }

    private func deliver(_ line: String, to client: ControlServer.ClientID) {
        if media.replyingTo == client {
            media.heldBack[client, default: []].append(line)
        } else {
            control?.send(line, to: client)
        }
    }

    /// The reply to `client`'s request is out: the event lines its request caused follow it.
    func replied(to client: ControlServer.ClientID) {
        if media.replyingTo == client { media.replyingTo = nil }
        guard let lines = media.heldBack.removeValue(forKey: client) else { return }
        for line in lines { control?.send(line, to: client) }
    }

    static func encode(_ event: ControlEvent) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(event)).map { String(decoding: $0, as: UTF8.self) }
            ?? #"{"event":"error","error":"internal: event could not be encoded"}"#
    }

    // MARK: - Stream changes

    /// After each batch of commands: streams whose state changed are published, and our MPRIS player
    /// follows a player-less owner's stream.
    func publishStreamChanges() {
        refreshNowPlaying()
        guard media.subscribers.values.contains(where: { $0.contains(.stream) }) else {
            media.reportedStreams = [:]
            return
        }
        var seen = Set<String>()
        for row in statusRows() {
            let key = Self.key(of: row)
            seen.insert(key)
            if let old = media.reportedStreams[key], !Self.differs(old, row) { continue }
            media.reportedStreams[key] = row
            publish(ControlEvent(event: .stream, stream: row))
        }
        for key in media.reportedStreams.keys.sorted() where !seen.contains(key) {
            guard var gone = media.reportedStreams.removeValue(forKey: key) else { continue }
            gone.state = .ended
            publish(ControlEvent(event: .stream, stream: gone))
        }
    }

    private static func key(of row: StatusReport.Stream) -> String {
        row.index.map { String($0) } ?? row.hook ?? row.application
    }

    /// Whether a subscriber should hear of the change (not of every ramp step's factor).
    private static func differs(_ old: StatusReport.Stream, _ new: StatusReport.Stream) -> Bool {
        old.state != new.state || old.class != new.class || old.muted != new.muted || old.spoken != new.spoken
            || old.audible != new.audible || old.target != new.target
            || old.role != new.role || old.application != new.application
    }
}
