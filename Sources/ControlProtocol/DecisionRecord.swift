/// One decision as `status` reports it (its `decisions` list) and `top` shows it.
public struct DecisionRecord: Codable, Hashable, Sendable {
    /// Wall-clock time, seconds since 1970.
    public var time: Double
    /// The sink input's index, or a hook's token.
    public var stream: String
    public var application: String
    public var `class`: String
    /// Why: the rule, or the interruption in force.
    public var reason: String
    /// What was done: ducked, paused, restored, muted…
    public var action: String

    public init(time: Double, stream: String, application: String, class className: String, reason: String,
                action: String) {
        self.time = time
        self.stream = stream
        self.application = application
        self.class = className
        self.reason = reason
        self.action = action
    }
}
