import CPulse
import SoundBackend

// Capture streams (source outputs): who records what, and whether it is a
// sink's monitor. Same pattern as the sink inputs (PulseConnection+Streams):
// one `get_source_output_info` per NEW/CHANGE event (coalesced), the client's
// properties merged in, and the source's `monitor_of_sink` looked up once per
// source, before the capture is announced.
//
// Why `monitor_of_sink` and not a source name ending in `.monitor`: both
// servers report it (pipewire-pulse 0.3.65 fills it for the monitor it
// makes of every sink, and the monitor's index is the sink's own), while the
// name is only a convention that a user's or module's source may break
// either way (a remap source called `x.monitor`, a monitor renamed).
extension PulseConnection {
    // MARK: - Start

    /// Lists the source outputs for ``onInitialCaptures``; called by `startTracking`.
    func listCaptures() {
        guard let context else { return }
        captures.listPending = true
        let request = SourceOutputListRequest(connection: self)
        if !request.start({ pa_context_get_source_output_info_list(context, SourceOutputListRequest.callback, $0) }) {
            captureListArrived(nil)
        }
    }

    /// Takes the initial list (`nil`: the request failed).
    func captureListArrived(_ captures: [SourceOutput]?) {
        if let captures {
            for capture in captures { updateCapture(capture) }
        } else {
            reportFailure(of: "list source outputs", context: context)
        }
        self.captures.listPending = false
        deliverInitialCapturesIfComplete()
    }

    /// Delivers ``onInitialCaptures`` once, after ``onInitialStreams``, when
    /// the list is in and every listed capture's client and source are known.
    func deliverInitialCapturesIfComplete() {
        guard tracker.initialDelivered, !captures.initialDelivered, !captures.listPending,
            captures.records.values.allSatisfy(\.isComplete)
        else { return }
        captures.initialDelivered = true
        var list: [SourceOutput] = []
        for index in captures.records.keys.sorted() {
            guard var record = captures.records[index] else { continue }
            let capture = captures.merged(record, clients: tracker.clients)
            record.delivered = capture
            captures.records[index] = record
            list.append(capture)
        }
        onNews(.initialCaptures(list))
    }

    // MARK: - Events

    /// Asks for a source output's current state; coalesces with a fetch in flight.
    func fetchCapture(_ index: UInt32) {
        if captures.fetches[index] != nil {
            captures.fetches[index]?.again = true
            return
        }
        guard let context else { return }
        let fetch = CaptureTracker.Fetch(token: captures.nextToken())
        captures.fetches[index] = fetch
        let request = SourceOutputRequest(connection: self, index: index, token: fetch.token)
        if !request.start({ pa_context_get_source_output_info(context, index, SourceOutputRequest.callback, $0) }) {
            captures.fetches.removeValue(forKey: index)
            reportFailure(of: "get source output \(index)", context: context)
        }
    }

    /// Takes the answer to ``fetchCapture(_:)``; `capture` is nil when the
    /// source output was already gone.
    func captureFetched(_ index: UInt32, token: UInt64, capture: SourceOutput?) {
        guard let fetch = captures.fetches[index], fetch.token == token else { return }
        captures.fetches.removeValue(forKey: index)
        if let capture {
            updateCapture(capture)
        }
        if fetch.again {
            fetchCapture(index)
        }
    }

    func captureRemoved(_ index: UInt32) {
        captures.fetches.removeValue(forKey: index)
        guard let record = captures.records.removeValue(forKey: index) else { return }
        captures.pruneSources()
        if record.delivered != nil {
            onNews(.captureRemoved(index))
        }
    }

    /// Records a fresh snapshot (own properties only), fetching its client
    /// or source first if they are not known, and delivers what changed.
    private func updateCapture(_ capture: SourceOutput) {
        var record = captures.records[capture.index] ?? CaptureTracker.Record(own: capture)
        record.own = capture
        // Set either way: an earlier snapshot may have been waiting for another source.
        record.awaitingClient = capture.clientIndex.map { tracker.clients[$0] == nil } ?? false
        record.awaitingSource = captures.sources[capture.sourceIndex] == nil
        if record.awaitingClient, let client = capture.clientIndex { fetchClient(client) }
        if record.awaitingSource { fetchSource(capture.sourceIndex) }
        captures.records[capture.index] = record
        publishCapture(capture.index)
    }

    /// Delivers a record's merged snapshot as added or changed, if it is
    /// complete and different from the last delivery.
    private func publishCapture(_ index: UInt32) {
        guard captures.initialDelivered, var record = captures.records[index], record.isComplete else { return }
        let capture = captures.merged(record, clients: tracker.clients)
        let previous = record.delivered
        guard capture != previous else { return }
        record.delivered = capture
        captures.records[index] = record
        if previous == nil {
            onNews(.captureAdded(capture))
        } else {
            onNews(.captureChanged(capture))
        }
    }

    // MARK: - Clients and sources

    /// A client's properties arrived (or it was gone): its captures may be announced.
    func capturesClientKnown(_ client: UInt32) {
        let affected = captures.records.values.filter { $0.own.clientIndex == client }.map(\.own.index).sorted()
        for index in affected {
            captures.records[index]?.awaitingClient = false
            publishCapture(index)
        }
        deliverInitialCapturesIfComplete()
    }

    private func fetchSource(_ index: UInt32) {
        guard let context, !captures.sourceFetches.contains(index) else { return }
        captures.sourceFetches.insert(index)
        let request = SourceRequest(connection: self, index: index)
        if !request.start({ pa_context_get_source_info_by_index(context, index, SourceRequest.callback, $0) }) {
            reportFailure(of: "get source \(index)", context: context)
            sourceFetched(index, monitoredSink: nil)
        }
    }

    /// Takes a source's `monitor_of_sink` (`nil`: not a monitor, or the source is gone — a capture on a
    /// vanished source is about to move or end, and its CHANGE or REMOVE follows).
    func sourceFetched(_ index: UInt32, monitoredSink: UInt32?) {
        captures.sourceFetches.remove(index)
        let affected = captures.records.values.filter { $0.own.sourceIndex == index }.map(\.own.index).sorted()
        guard !affected.isEmpty else { return }
        captures.sources[index] = .some(monitoredSink)
        for capture in affected {
            captures.records[capture]?.awaitingSource = false
            publishCapture(capture)
        }
        deliverInitialCapturesIfComplete()
    }
}

// MARK: - Requests

/// `pa_context_get_source_output_info_list` for the initial snapshot.
private final class SourceOutputListRequest: PulseRequest {
    weak var connection: PulseConnection?
    var captures: [SourceOutput] = []

    init(connection: PulseConnection) {
        self.connection = connection
    }

    static let callback: pa_source_output_info_cb_t = { _, info, eol, userdata in
        guard let request: SourceOutputListRequest = borrow(userdata) else { return }
        if eol == 0, let info {
            request.captures.append(SourceOutput(info.pointee))
        } else {
            request.connection?.captureListArrived(eol > 0 ? request.captures : nil)
        }
    }
}

/// `pa_context_get_source_output_info` after a NEW or CHANGE event.
private final class SourceOutputRequest: PulseRequest {
    weak var connection: PulseConnection?
    let index: UInt32
    let token: UInt64
    var capture: SourceOutput?

    init(connection: PulseConnection, index: UInt32, token: UInt64) {
        self.connection = connection
        self.index = index
        self.token = token
    }

    static let callback: pa_source_output_info_cb_t = { _, info, eol, userdata in
        guard let request: SourceOutputRequest = borrow(userdata) else { return }
        if eol == 0, let info {
            request.capture = SourceOutput(info.pointee)
        } else {
            // eol < 0: no such entity, the capture is already gone.
            request.connection?.captureFetched(request.index, token: request.token, capture: request.capture)
        }
    }
}

/// `pa_context_get_source_info_by_index`: is the source a sink's monitor?
private final class SourceRequest: PulseRequest {
    weak var connection: PulseConnection?
    let index: UInt32
    var monitoredSink: UInt32?

    init(connection: PulseConnection, index: UInt32) {
        self.connection = connection
        self.index = index
    }

    static let callback: pa_source_info_cb_t = { _, info, eol, userdata in
        guard let request: SourceRequest = borrow(userdata) else { return }
        if eol == 0, let info {
            let sink = info.pointee.monitor_of_sink
            request.monitoredSink = sink == invalidIndex ? nil : sink
        } else {
            request.connection?.sourceFetched(request.index, monitoredSink: request.monitoredSink)
        }
    }
}
