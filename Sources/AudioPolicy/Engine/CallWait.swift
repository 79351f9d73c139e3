/// Interruptions that wait for the call to end: Android's delayed audio focus, asked for by a hook
/// (`audio-policyd interrupt --wait-for-call`, the control socket's `begin` with `wait-for-call`).
///
/// A reminder or a text-to-speech line that starts during a call talks over it. Such a request begins at
/// once when no call is active, else when the last call is over; its hook is told then
/// (``Command/began(_:)``) and runs its sound. Until then it interrupts nothing; ending it withdraws it.
struct CallWait: Sendable {
    /// One request that waits.
    struct Request: Sendable {
        var token: StreamID
        var className: String
        var properties: Properties
    }

    /// The requests waiting, in the order they came.
    private(set) var waiting: [Request] = []

    mutating func add(_ request: Request) { waiting.append(request) }

    /// Withdraws the request `token`; whether it was waiting.
    mutating func withdraw(_ token: StreamID) -> Bool {
        guard let position = waiting.firstIndex(where: { $0.token == token }) else { return false }
        waiting.remove(at: position)
        return true
    }

    /// Every waiting request, taken out (they begin now).
    mutating func takeAll() -> [Request] {
        defer { waiting = [] }
        return waiting
    }
}

extension Engine {
    /// Whether a call is on: a live stream or hook of a `call` class that plays.
    var callActive: Bool {
        streams.ids.contains { id in
            streams[id].map { $0.isLive && $0.playing && $0.hasPlayed && $0.interruptionClass.kind == .call } ?? false
        }
    }

    /// A hook's interruption that is to wait for the call: begun now when no call is on, else kept waiting.
    mutating func awaitCall(_ request: CallWait.Request, now: Milliseconds, into out: inout [Command]) {
        callWait.add(request)
        guard callActive else { return beginAfterCall(now: now, into: &out) }
        let application = request.properties["application.name"] ?? request.token.rawValue
        out.append(.decision(Decision(stream: request.token, application: application, className: request.className,
                                      reason: "a call is on", action: "waits for the call to end")))
    }

    /// Begins the interruptions that waited, once no call is on (after every event).
    mutating func beginAfterCall(now: Milliseconds, into out: inout [Command]) {
        guard !callWait.waiting.isEmpty, !callActive else { return }
        for request in callWait.takeAll() {
            out.append(.interruptionBegan(request.token))
            beginInterruption(request.token, className: request.className, properties: request.properties,
                              now: now, into: &out)
        }
    }
}
