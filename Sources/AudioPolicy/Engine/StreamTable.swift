/// The engine's streams in the order they started, addressable by id or by position.
///
/// Decisions walk every stream after every event; walking an array by position avoids hashing each
/// id several times per stream (with 200 streams, that hashing was most of a decision's cost). Each
/// record has its ``StreamGlance`` beside it, kept up to date on every change, so that a walk passes
/// over most streams without reading their records.
struct StreamTable: Sendable {
    private(set) var values: [TrackedStream] = []
    /// `glances[i]` is `StreamGlance(values[i])`.
    private var glances: [StreamGlance] = []
    private var positions: [StreamID: Int] = [:]

    var indices: Range<Int> { values.indices }
    var ids: [StreamID] { values.map(\.id) }

    /// The stream with this id; setting nil removes it, setting a new id appends it.
    subscript(id: StreamID) -> TrackedStream? {
        get { positions[id].map { values[$0] } }
        set {
            if let position = positions[id] {
                if let newValue {
                    values[position] = newValue
                    glances[position] = StreamGlance(newValue)
                } else {
                    remove(at: position)
                }
            } else if let newValue {
                positions[id] = values.count
                values.append(newValue)
                glances.append(StreamGlance(newValue))
            }
        }
    }

    /// What reconcile looks at first: whether the stream is live, a hook's, its class, and whether the
    /// engine has left it alone (no effect, no user override in force).
    func glance(at position: Int) -> StreamGlance { glances[position] }

    /// The ids, in order, of the streams that may be due (``StreamGlance/mayBeDue``) and `test` picks:
    /// `test` must pick none that may not be. Only those records are read.
    ///
    /// A scan that usually finds nothing (the holds that are over, the pauses whose player is late, the
    /// output losses whose window has passed) runs after every event: copying each record out to look
    /// at it (a retain and a release per reference it holds) made those scans a third of a decision's
    /// cost with 200 streams. The records are lent through the array's buffer, though the release
    /// build was still seen to copy each one it hands `test` (`objdump` of `nextDeadline`): what
    /// spares the copies is that the glance passes over the streams that cannot be due.
    func dueIDs(where test: (borrowing TrackedStream) -> Bool) -> [StreamID] {
        values.withUnsafeBufferPointer { records in
            var found: [StreamID] = []
            for position in records.indices where glances[position].mayBeDue && test(records[position]) {
                found.append(records[position].id)
            }
            return found
        }
    }

    /// The earliest of what `due` says of each stream that may be due (``StreamGlance/mayBeDue``; `due`
    /// must say nil of the others), only those records read (the daemon asks after every event, to arm
    /// its one timer).
    func earliest(_ due: (borrowing TrackedStream) -> Milliseconds?) -> Milliseconds? {
        values.withUnsafeBufferPointer { records in
            var next: Milliseconds?
            for position in records.indices where glances[position].mayBeDue {
                if let at = due(records[position]), next.map({ at < $0 }) ?? true { next = at }
            }
            return next
        }
    }

    /// The first position whose glance is not its record's, if any: the engine's property run checks
    /// after every step that there is none.
    var staleGlance: Int? {
        guard glances.count == values.count else { return min(glances.count, values.count) }
        return values.indices.first { StreamGlance(values[$0]) != glances[$0] }
    }

    /// The id of the stream at a position, read in place: the position subscript's getter copies the
    /// whole record (after every prompt, the measured streams' order walked all 200 of them so).
    func id(at position: Int) -> StreamID { values[position].id }

    /// The stream at a position, mutable in place; its glance follows the change.
    subscript(position position: Int) -> TrackedStream {
        get { values[position] }
        _modify {
            defer { glances[position] = StreamGlance(values[position]) }
            yield &values[position]
        }
    }

    private mutating func remove(at position: Int) {
        positions[values[position].id] = nil
        values.remove(at: position)
        glances.remove(at: position)
        for later in position..<values.count { positions[values[later].id] = later }
    }
}
