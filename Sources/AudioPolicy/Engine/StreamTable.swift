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

    /// The ids of the streams `test` picks, in order, each record read in place.
    ///
    /// A scan that usually finds nothing (the pauses whose player is late, the output losses whose window
    /// has passed) runs after every event: copying each record out to look at it (a retain and a
    /// release per reference it holds) made those scans a third of a decision's cost with 200 streams.
    func ids(where test: (TrackedStream) -> Bool) -> [StreamID] {
        var found: [StreamID] = []
        for position in values.indices where test(values[position]) { found.append(values[position].id) }
        return found
    }

    /// The earliest of what `due` says of each stream, each record read in place (the daemon asks after
    /// every event, to arm its one timer).
    func earliest(_ due: (TrackedStream) -> Milliseconds?) -> Milliseconds? {
        var next: Milliseconds?
        for position in values.indices {
            if let at = due(values[position]), next.map({ at < $0 }) ?? true { next = at }
        }
        return next
    }

    /// The id of the stream at a position, read in place: the position subscript's getter copies the
    /// whole record (after every prompt, the measured streams' order walked all 200 of them so).
    func id(at position: Int) -> StreamID { values[position].id }

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
