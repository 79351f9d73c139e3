/// What the policy asks of one stream at a moment — the strictest of what the interruptions in force and
/// focus ask — with the class whose ramps apply and the reason a decision gives.
struct Demand {
    var effect = Effect.none
    /// The class whose duck it is: its `duck-ramp` and `restore-ramp` move the stream.
    var source: InterruptionClass?
    /// Why, when it is not "interrupted by class NAME" (focus says which window it is about).
    var reason: String?
    /// Whether focus asks it (so that its end says focus came back, not that an interruption ended).
    var byFocus = false

    /// Takes `asked` if it is stricter than what is asked so far.
    mutating func add(_ asked: Effect, from cls: InterruptionClass, reason: String? = nil, byFocus: Bool = false) {
        let next = effect.stricter(asked)
        guard next != effect else { return }
        effect = next
        source = cls
        self.reason = reason
        self.byFocus = byFocus
    }

    /// The reason a decision on it gives.
    var why: String {
        reason ?? source.map { "interrupted by class \($0.name)" } ?? "interruption over"
    }
}
