/// The acknowledged requests the server has not answered yet, and the drains waiting for them.
///
/// Why: replies on one context do not always come in the order the requests were sent.
/// pipewire-pulse answers a volume or mute write only after its next sync with PipeWire (its
/// `operation_new`), but a server-info request at once; so a round trip sent after a write can be
/// answered first. A drain that waited for the round trip alone said "answered" while our mute and
/// unmute were still in flight, and a snapshot fetched then could still show the mute (a user's mute
/// a moment later was taken for the echo of ours: `PulseConnectionTests` on CI's PipeWire leg). So a
/// drain waits for its round trip *and* for every acknowledged request sent before it.
///
/// The numbers are this type's own and never restart, so a request of a torn-down context that ends
/// late cannot be taken for one of the next context.
struct PendingAnswers {
    private var last: UInt64 = 0
    private var unanswered: Set<UInt64> = []
    private var waiting: [(before: UInt64, completion: () -> Void)] = []

    /// How many requests are out.
    var count: Int { unanswered.count }

    /// Numbers a request about to be sent and notes it as unanswered.
    mutating func sent() -> UInt64 {
        last += 1
        unanswered.insert(last)
        return last
    }

    /// The place of a drain asked now: it waits for every request numbered below it.
    mutating func mark() -> UInt64 {
        last += 1
        return last
    }

    /// The request numbered `number` ended (answered, refused, cancelled, or never started); returns
    /// the drains that have nothing left to wait for, to be called by the caller once it is done.
    mutating func ended(_ number: UInt64) -> [() -> Void] {
        unanswered.remove(number)
        return takeReady()
    }

    /// Runs `completion` once every request numbered below `before` has ended: returns it at once
    /// when none is left (for the caller to call), or keeps it.
    mutating func whenAnswered(before: UInt64, _ completion: @escaping () -> Void) -> [() -> Void] {
        waiting.append((before, completion))
        return takeReady()
    }

    /// The drains with nothing left to wait for. Most requests end with no drain waiting (every ramp
    /// step is one), so that case does no search.
    private mutating func takeReady() -> [() -> Void] {
        guard !waiting.isEmpty else { return [] }
        let oldest = unanswered.min() ?? .max
        let ready = waiting.filter { $0.before <= oldest }
        guard !ready.isEmpty else { return [] }
        waiting.removeAll { $0.before <= oldest }
        return ready.map(\.completion)
    }
}
