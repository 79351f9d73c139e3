/// The engine's streams in the order they started, addressable by id or by position.
///
/// Decisions walk every stream after every event; walking an array by position avoids hashing each
/// id several times per stream (with 200 streams, that hashing was most of a decision's cost).
struct StreamTable: Sendable {
    private(set) var values: [TrackedStream] = []
    private var positions: [StreamID: Int] = [:]

    var indices: Range<Int> { values.indices }
    var ids: [StreamID] { values.map(\.id) }

    /// The stream with this id; setting nil removes it, setting a new id appends it.
    subscript(id: StreamID) -> TrackedStream? {
        get { positions[id].map { values[$0] } }
        set {
            if let position = positions[id] {
                if let newValue { values[position] = newValue } else { remove(at: position) }
            } else if let newValue {
                positions[id] = values.count
                values.append(newValue)
            }
        }
    }

    /// What reconcile looks at first, read in place: whether the stream is live, a hook's, its class,
    /// and whether the engine has left it alone (no effect, no user override in force).
    func glance(at position: Int)
        -> (isLive: Bool, isHook: Bool, className: String, kind: InterruptionKind, isUntouched: Bool) {
        let identity = values[position].identity
        let cls = identity.classification.interruptionClass
        return (values[position].endedAt == nil, identity.isHook, cls.name, cls.kind,
                values[position].effect == .none && !values[position].userOwnsVolume
                    && !values[position].userOwnsPlayback)
    }

    /// The stream at a position, mutable in place.
    subscript(position position: Int) -> TrackedStream {
        get { values[position] }
        _modify { yield &values[position] }
    }

    private mutating func remove(at position: Int) {
        positions[values[position].id] = nil
        values.remove(at: position)
        for later in position..<values.count { positions[values[later].id] = later }
    }
}
