import ControlProtocol

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
