import AudioPolicy
import EventLoop
import SoundBackend

/// What a ``PulseConnection`` remembers between subscription events to turn
/// them into stream snapshots: known sink inputs and client property lists,
/// requests in flight, and our own recent writes.
struct StreamTracker {
    /// One sink input as far as we know it.
    struct Record {
        /// The latest snapshot with the stream's own properties only.
        var own: SinkInput
        /// The merged snapshot last delivered; `nil` until announced.
        var delivered: SinkInput?
        /// When the NEW event for it arrived, if one did.
        var announcedAt: UInt64?
        /// When the first answer describing it arrived, after that event.
        var describedAt: UInt64?
        /// Waiting for its client's properties before it can be announced.
        var awaitingClient = false
        /// The place in the connection's order of the request that fetched ``own`` (0: the initial
        /// list), which tells which of our writes it shows (``OwnWrites``).
        var fetched: UInt64 = 0
        /// Its volume is awaited (see ``PulseConnection/volumeHoldTime``);
        /// the timer ends the wait.
        var volumeHold: MainLoop.Timer?
    }

    /// A `get_sink_input_info` in flight.
    struct Fetch {
        /// Tells this fetch's reply from that of an earlier, abandoned one.
        var token: UInt64
        /// Another CHANGE arrived meanwhile: fetch again after the reply.
        var again = false
        var announcedAt: UInt64?
    }

    var records: [UInt32: Record] = [:]
    /// Client property lists by client index.
    var clients: [UInt32: [String: String]] = [:]
    var clientFetches: Set<UInt32> = []
    var streamFetches: [UInt32: Fetch] = [:]
    var ownWrites: [UInt32: OwnWrites] = [:]
    /// Initial list requests not answered yet.
    var listsPending = 0
    var initialDelivered = false
    /// The saved entries, read with the initial lists (``SavedLevels/savedAtStart``).
    var savedAtStart: [StreamRestoreEntry]?
    /// pipewire-pulse announces new streams before it knows their volume.
    var serverIsPipeWire = false
    private var lastToken: UInt64 = 0

    mutating func nextToken() -> UInt64 {
        lastToken += 1
        return lastToken
    }

    /// `record`'s snapshot with its client's properties merged in.
    func merged(_ record: Record) -> SinkInput {
        var stream = record.own
        stream.properties = PropertyList.merged(
            stream: record.own.properties, client: record.own.clientIndex.flatMap { clients[$0] })
        return stream
    }
}
