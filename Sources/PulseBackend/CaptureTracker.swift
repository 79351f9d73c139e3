import SoundBackend

/// What a ``PulseConnection`` remembers between subscription events to turn
/// them into capture-stream (source output) snapshots. Client property lists
/// are shared with the sink inputs' ``StreamTracker``.
struct CaptureTracker {
    /// One source output as far as we know it.
    struct Record {
        /// The latest snapshot with the stream's own properties only.
        var own: SourceOutput
        /// The merged snapshot last delivered; `nil` until announced.
        var delivered: SourceOutput?
        /// Waiting for its client's properties before it can be announced.
        var awaitingClient = false
        /// Waiting for its source's description (monitor or not).
        var awaitingSource = false

        var isComplete: Bool { !awaitingClient && !awaitingSource }
    }

    /// A `get_source_output_info` in flight.
    struct Fetch {
        /// Tells this fetch's reply from that of an earlier, abandoned one.
        var token: UInt64
        /// Another CHANGE arrived meanwhile: fetch again after the reply.
        var again = false
    }

    var records: [UInt32: Record] = [:]
    /// By source index: the sink it is the monitor of (`.some(nil)`: a real
    /// input). Kept only for sources some capture records from.
    var sources: [UInt32: UInt32?] = [:]
    var sourceFetches: Set<UInt32> = []
    var fetches: [UInt32: Fetch] = [:]
    /// The initial source-output list is not answered yet.
    var listPending = false
    var initialDelivered = false
    private var lastToken: UInt64 = 0

    mutating func nextToken() -> UInt64 {
        lastToken += 1
        return lastToken
    }

    /// `record`'s snapshot with its client's properties and its source's
    /// monitor facts merged in.
    func merged(_ record: Record, clients: [UInt32: [String: String]]) -> SourceOutput {
        var capture = record.own
        capture.properties = PropertyList.merged(
            stream: record.own.properties, client: record.own.clientIndex.flatMap { clients[$0] })
        capture.monitoredSink = sources[record.own.sourceIndex] ?? nil
        return capture
    }

    /// Forgets the sources no known capture records from.
    mutating func pruneSources() {
        let used = Set(records.values.map(\.own.sourceIndex))
        sources = sources.filter { used.contains($0.key) }
    }
}
