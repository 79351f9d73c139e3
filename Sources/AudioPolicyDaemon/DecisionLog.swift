import AudioPolicy

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

/// The last few decisions, oldest first: a fixed-size ring, so a daemon that runs for months keeps
/// exactly as many as `status` shows.
public struct DecisionLog: Sendable {
    public static let capacity = 20

    private var ring: [DecisionRecord] = []
    private var next = 0

    public init() {}

    public mutating func append(_ record: DecisionRecord) {
        if ring.count < Self.capacity {
            ring.append(record)
        } else {
            ring[next] = record
        }
        next = (next + 1) % Self.capacity
    }

    /// The decisions kept, oldest first.
    public var recent: [DecisionRecord] {
        ring.count < Self.capacity ? ring : Array(ring[next...] + ring[..<next])
    }
}
