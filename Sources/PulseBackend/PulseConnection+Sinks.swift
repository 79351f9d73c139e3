import CPulse
import SoundBackend

// Outputs (sinks): one `get_sink_info_by_index` per NEW/CHANGE event (coalesced while one is in flight),
// delivered when it differs from the last delivery; a REMOVE is delivered at once, without a round trip:
// it is what an output's loss is timed from, and PulseAudio has already moved the sink's streams away
// (their SINK_INPUT CHANGE events come before the removal, their descriptions after it).
extension PulseConnection {
    /// Lists the sinks; each is delivered with ``onSinkAdded``. Called by `startTracking`.
    func listSinks() {
        guard let context else { return }
        let request = SinkListRequest(connection: self)
        if !request.start({ pa_context_get_sink_info_list(context, SinkListRequest.callback, $0) }) {
            reportFailure(of: "list sinks", context: context)
        }
    }

    func sinkListArrived(_ list: [Sink]) {
        for sink in list { sinkFetched(sink.index, sink: sink) }
    }

    /// Asks for a sink's current state; coalesces with a fetch in flight.
    func fetchSink(_ index: UInt32) {
        if sinkFetches[index] != nil {
            sinkFetches[index] = true
            return
        }
        guard let context else { return }
        sinkFetches[index] = false
        let request = SinkRequest(connection: self, index: index)
        if !request.start({ pa_context_get_sink_info_by_index(context, index, SinkRequest.callback, $0) }) {
            sinkFetches[index] = nil
            reportFailure(of: "get sink \(index)", context: context)
        }
    }

    /// Takes a sink's description (`nil`: it was gone already; its REMOVE follows or came).
    func sinkFetched(_ index: UInt32, sink: Sink?) {
        let again = sinkFetches.removeValue(forKey: index) ?? false
        if let sink {
            let previous = sinks[index]
            if previous != sink {
                sinks[index] = sink
                if previous == nil { onNews(.sinkAdded(sink)) } else { onNews(.sinkChanged(sink)) }
            }
        }
        if again { fetchSink(index) }
    }

    func sinkRemoved(_ index: UInt32) {
        sinkFetches[index] = nil
        guard sinks.removeValue(forKey: index) != nil else { return }
        onNews(.sinkRemoved(index))
    }
}

private final class SinkListRequest: PulseRequest {
    weak var connection: PulseConnection?
    var sinks: [Sink] = []

    init(connection: PulseConnection) {
        self.connection = connection
    }

    static let callback: pa_sink_info_cb_t = { _, info, eol, userdata in
        guard let request: SinkListRequest = borrow(userdata) else { return }
        if eol == 0, let info {
            request.sinks.append(Sink(info.pointee))
        } else {
            request.connection?.sinkListArrived(request.sinks)
        }
    }
}

private final class SinkRequest: PulseRequest {
    weak var connection: PulseConnection?
    let index: UInt32
    var sink: Sink?

    init(connection: PulseConnection, index: UInt32) {
        self.connection = connection
        self.index = index
    }

    static let callback: pa_sink_info_cb_t = { _, info, eol, userdata in
        guard let request: SinkRequest = borrow(userdata) else { return }
        if eol == 0, let info {
            request.sink = Sink(info.pointee)
        } else {
            request.connection?.sinkFetched(request.index, sink: request.sink)
        }
    }
}
