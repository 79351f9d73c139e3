import AudioPolicy
import CPulse
import EventLoop
import SoundBackend

// Turning subscription events into stream snapshots.
//
// Requests on one context are answered in the order they were sent, and the
// server sends each event after the state it reports. So:
// - the client list (asked first) is known before the sink-input list, and
//   a client's NEW event is fetched before its streams' NEW events;
// - an event that raced with the initial lists is harmless: a NEW for a
//   stream in the list comes back as an unchanged snapshot (dropped), a
//   REMOVE for a stream not in the list is ignored.
extension PulseConnection {
    // MARK: - Start

    /// Asks for the server info (then reports `.ready`), subscribes, and
    /// lists clients, sink inputs and source outputs; called when the context is READY.
    func startTracking() {
        guard let context else { return }
        let server = ServerInfoRequest(connection: self)
        if !server.start({ pa_context_get_server_info(context, ServerInfoRequest.callback, $0) }) {
            serverDescribed(nil, cookie: nil)
        }
        let mask = pa_subscription_mask_t(
            rawValue: PA_SUBSCRIPTION_MASK_SINK_INPUT.rawValue | PA_SUBSCRIPTION_MASK_CLIENT.rawValue
                | PA_SUBSCRIPTION_MASK_SOURCE_OUTPUT.rawValue | PA_SUBSCRIPTION_MASK_SINK.rawValue)
        let subscribe = AcknowledgedRequest(
            connection: self, action: "subscribe to sink inputs, source outputs, sinks and clients")
        if !subscribe.start({ pa_context_subscribe(context, mask, AcknowledgedRequest.callback, $0) }) {
            reportFailure(of: subscribe.action, context: context)
        }

        tracker.listsPending = 3
        let clients = ClientListRequest(connection: self)
        if !clients.start({ pa_context_get_client_info_list(context, ClientListRequest.callback, $0) }) {
            initialListFailed("list clients")
        }
        let streams = SinkInputListRequest(connection: self)
        if !streams.start({ pa_context_get_sink_input_info_list(context, SinkInputListRequest.callback, $0) }) {
            initialListFailed("list sink inputs")
        }
        // After the streams (replies come in request order): the entries as they are once the streams
        // are listed, for recovery (``SavedLevels/savedAtStart``).
        readSavedEntries { [weak self] entries in
            guard let self else { return }
            tracker.savedAtStart = entries
            tracker.listsPending -= 1
            deliverInitialStreamsIfComplete()
        }
        // Asked after the clients, so their clients are known when they arrive.
        listCaptures()
        listSinks()
    }

    func serverDescribed(_ description: String?, cookie: UInt32?) {
        serverDescription = description
        self.cookie = cookie
        tracker.serverIsPipeWire = description?.contains("PipeWire") == true
        setState(.ready)
    }

    func clientListArrived(_ clients: [(index: UInt32, properties: [String: String])]) {
        for client in clients {
            tracker.clients[client.index] = client.properties
        }
        tracker.listsPending -= 1
        deliverInitialStreamsIfComplete()
    }

    func sinkInputListArrived(_ streams: [SinkInput]) {
        for stream in streams {
            update(stream, announcedAt: nil)
        }
        tracker.listsPending -= 1
        deliverInitialStreamsIfComplete()
    }

    func initialListFailed(_ action: String) {
        reportFailure(of: action, context: context)
        tracker.listsPending -= 1
        deliverInitialStreamsIfComplete()
    }

    private func deliverInitialStreamsIfComplete() {
        guard !tracker.initialDelivered, tracker.listsPending == 0,
            !tracker.records.values.contains(where: \.awaitingClient)
        else { return }
        tracker.initialDelivered = true
        var streams: [SinkInput] = []
        for index in tracker.records.keys.sorted() {
            guard var record = tracker.records[index] else { continue }
            let stream = tracker.merged(record)
            record.delivered = stream
            tracker.records[index] = record
            streams.append(stream)
        }
        onNews(.initialStreams(streams))
        deliverInitialCapturesIfComplete()
    }

    // MARK: - Events

    /// Handles one subscription event that entered the process at `receivedAt`.
    func subscriptionEvent(_ event: pa_subscription_event_type_t, index: UInt32, receivedAt: UInt64) {
        lastEventReceivedAt = receivedAt
        let facility = event.rawValue & PA_SUBSCRIPTION_EVENT_FACILITY_MASK.rawValue
        let kind = event.rawValue & PA_SUBSCRIPTION_EVENT_TYPE_MASK.rawValue
        switch (facility, kind) {
        case (PA_SUBSCRIPTION_EVENT_SINK_INPUT.rawValue, PA_SUBSCRIPTION_EVENT_NEW.rawValue):
            fetchStream(index, announcedAt: receivedAt)
        case (PA_SUBSCRIPTION_EVENT_SINK_INPUT.rawValue, PA_SUBSCRIPTION_EVENT_CHANGE.rawValue):
            fetchStream(index, announcedAt: nil)
        case (PA_SUBSCRIPTION_EVENT_SINK_INPUT.rawValue, PA_SUBSCRIPTION_EVENT_REMOVE.rawValue):
            streamRemoved(index)
        case (PA_SUBSCRIPTION_EVENT_SOURCE_OUTPUT.rawValue, PA_SUBSCRIPTION_EVENT_NEW.rawValue),
             (PA_SUBSCRIPTION_EVENT_SOURCE_OUTPUT.rawValue, PA_SUBSCRIPTION_EVENT_CHANGE.rawValue):
            fetchCapture(index)
        case (PA_SUBSCRIPTION_EVENT_SOURCE_OUTPUT.rawValue, PA_SUBSCRIPTION_EVENT_REMOVE.rawValue):
            captureRemoved(index)
        case (PA_SUBSCRIPTION_EVENT_SINK.rawValue, PA_SUBSCRIPTION_EVENT_REMOVE.rawValue):
            sinkRemoved(index)
        case (PA_SUBSCRIPTION_EVENT_SINK.rawValue, _):
            fetchSink(index)
        case (PA_SUBSCRIPTION_EVENT_CLIENT.rawValue, PA_SUBSCRIPTION_EVENT_REMOVE.rawValue):
            tracker.clients.removeValue(forKey: index)
        case (PA_SUBSCRIPTION_EVENT_CLIENT.rawValue, _):
            fetchClient(index)
        default:
            break
        }
    }

    // MARK: - Sink inputs

    /// Asks for a sink input's current state; coalesces with a fetch in flight.
    private func fetchStream(_ index: UInt32, announcedAt: UInt64?) {
        if var fetch = tracker.streamFetches[index] {
            fetch.again = true
            fetch.announcedAt = fetch.announcedAt ?? announcedAt
            tracker.streamFetches[index] = fetch
            return
        }
        guard let context else { return }
        let fetch = StreamTracker.Fetch(token: tracker.nextToken(), announcedAt: announcedAt)
        tracker.streamFetches[index] = fetch
        let request = SinkInputRequest(connection: self, index: index, token: fetch.token)
        if !request.start({ pa_context_get_sink_input_info(context, index, SinkInputRequest.callback, $0) }) {
            tracker.streamFetches.removeValue(forKey: index)
            reportFailure(of: "get sink input \(index)", context: context)
        }
    }

    /// Takes the answer to ``fetchStream(_:announcedAt:)``; `stream` is nil
    /// when the sink input was already gone.
    func streamFetched(_ index: UInt32, token: UInt64, stream: SinkInput?) {
        // A fetch abandoned by a REMOVE (or superseded) has nothing to say.
        guard let fetch = tracker.streamFetches[index], fetch.token == token else { return }
        tracker.streamFetches.removeValue(forKey: index)
        if let stream {
            update(stream, announcedAt: fetch.announcedAt, fetched: token)
        }
        if fetch.again {
            fetchStream(index, announcedAt: nil)
        }
    }

    /// Records a fresh snapshot (own properties only) and delivers what changed.
    private func update(_ stream: SinkInput, announcedAt: UInt64?, fetched: UInt64 = 0) {
        var record = tracker.records[stream.index] ?? StreamTracker.Record(own: stream)
        record.own = stream
        record.fetched = fetched
        record.announcedAt = record.announcedAt ?? announcedAt
        if announcedAt != nil, record.describedAt == nil { record.describedAt = MainLoop.monotonicMicroseconds() }
        if let client = stream.clientIndex, tracker.clients[client] == nil {
            // Announced before its client was fetched: wait for the client.
            record.awaitingClient = true
            tracker.records[stream.index] = record
            fetchClient(client)
            return
        }
        record.awaitingClient = false
        if record.delivered == nil, tracker.initialDelivered, tracker.serverIsPipeWire, stream.volumeLooksUnset,
           record.volumeHold == nil {
            record.volumeHold = volumeHoldTimer(for: stream.index)
        } else if !stream.volumeLooksUnset {
            record.volumeHold = nil
        }
        tracker.records[stream.index] = record
        publish(stream.index)
    }

    /// pipewire-pulse (0.3.65) announces a new stream with every channel at
    /// 0 and reports its real (restored) volume a few milliseconds later in
    /// a CHANGE. Taking the 0 as the stream's volume would make the restored
    /// volume look like the user's change, and a duck computed from 0 would
    /// silence the stream; so such a stream is announced at once (it may be
    /// an interrupter: the others' ducks must not wait) with its volume
    /// marked pending, until its volume arrives, or for ``volumeHoldTime``
    /// at most (a stream that really starts at 0).
    private func volumeHoldTimer(for index: UInt32) -> MainLoop.Timer {
        let timer = MainLoop.Timer(loop: loop) { [weak self] in
            guard let self, var record = self.tracker.records[index] else { return }
            record.volumeHold = nil
            self.tracker.records[index] = record
            self.publish(index)
        }
        timer.schedule(after: Self.volumeHoldTime)
        return timer
    }

    /// The longest a new stream's volume is awaited (µs).
    static var volumeHoldTime: UInt64 { 100_000 }

    /// Delivers a record's merged snapshot as added or changed, if it is
    /// complete, announced, and different from the last delivery.
    private func publish(_ index: UInt32) {
        guard tracker.initialDelivered, var record = tracker.records[index], !record.awaitingClient
        else { return }
        var stream = tracker.merged(record)
        stream.volumePending = record.volumeHold != nil
        stream.announcedAt = record.announcedAt
        if let previous = record.delivered {
            guard !stream.sameState(as: previous) else {
                // Nothing to deliver, but the writes answered before this fetch are shown and settled.
                tracker.ownWrites[index]?.settle(fetched: record.fetched)
                if tracker.ownWrites[index]?.isEmpty == true { tracker.ownWrites[index] = nil }
                return
            }
            if previous.volumePending, !stream.volumePending {
                // The server's restored volume, late: nobody changed it.
                stream.levelChange = .none
            } else {
                var writes = tracker.ownWrites[index] ?? OwnWrites()
                (stream.levelChange, stream.theirVolume, stream.theirMute) = writes.classify(
                    previous: (previous.volume, previous.muted), current: (stream.volume, stream.muted),
                    now: MainLoop.monotonicMicroseconds(), fetched: record.fetched)
                stream.theirVolumeOvertaken = stream.theirVolume && writes.volumeInFlight(fetched: record.fetched)
                tracker.ownWrites[index] = writes.isEmpty ? nil : writes
            }
            record.delivered = stream
            tracker.records[index] = record
            onNews(.streamChanged(stream))
        } else {
            record.delivered = stream
            tracker.records[index] = record
            if let onStreamTimed, let announced = record.announcedAt {
                onStreamTimed(index, announced, record.describedAt ?? announced)
            }
            onNews(.streamAdded(stream))
        }
    }

    private func streamRemoved(_ index: UInt32) {
        tracker.streamFetches.removeValue(forKey: index)
        tracker.ownWrites.removeValue(forKey: index)
        guard let record = tracker.records.removeValue(forKey: index) else { return }
        if record.delivered != nil {
            onNews(.streamRemoved(index))
        }
    }

    // MARK: - Clients

    func fetchClient(_ index: UInt32) {
        guard let context, !tracker.clientFetches.contains(index) else { return }
        tracker.clientFetches.insert(index)
        let request = ClientRequest(connection: self, index: index)
        if !request.start({ pa_context_get_client_info(context, index, ClientRequest.callback, $0) }) {
            tracker.clientFetches.remove(index)
            reportFailure(of: "get client \(index)", context: context)
        }
    }

    /// Takes a client's properties (`nil`: the client was already gone) and
    /// re-delivers its streams whose merged properties changed.
    func clientFetched(_ index: UInt32, properties: [String: String]?) {
        tracker.clientFetches.remove(index)
        if let properties {
            tracker.clients[index] = properties
        }
        let affected = tracker.records.values.filter { $0.own.clientIndex == index }.map(\.own.index).sorted()
        for stream in affected {
            tracker.records[stream]?.awaitingClient = false
            publish(stream)
        }
        deliverInitialStreamsIfComplete()
        capturesClientKnown(index)
    }
}

// MARK: - Requests

/// `pa_context_get_sink_input_info_list` for the initial snapshot.
private final class SinkInputListRequest: PulseRequest {
    weak var connection: PulseConnection?
    var streams: [SinkInput] = []

    init(connection: PulseConnection) {
        self.connection = connection
    }

    static let callback: pa_sink_input_info_cb_t = { _, info, eol, userdata in
        guard let request: SinkInputListRequest = borrow(userdata) else { return }
        if eol == 0, let info {
            request.streams.append(SinkInput(info.pointee))
        } else if eol > 0 {
            request.connection?.sinkInputListArrived(request.streams)
        } else {
            request.connection?.initialListFailed("list sink inputs")
        }
    }
}

/// `pa_context_get_client_info_list` for the initial snapshot.
private final class ClientListRequest: PulseRequest {
    weak var connection: PulseConnection?
    var clients: [(index: UInt32, properties: [String: String])] = []

    init(connection: PulseConnection) {
        self.connection = connection
    }

    static let callback: pa_client_info_cb_t = { _, info, eol, userdata in
        guard let request: ClientListRequest = borrow(userdata) else { return }
        if eol == 0, let info {
            request.clients.append((info.pointee.index, PropertyList.dictionary(info.pointee.proplist)))
        } else if eol > 0 {
            request.connection?.clientListArrived(request.clients)
        } else {
            request.connection?.initialListFailed("list clients")
        }
    }
}

/// `pa_context_get_sink_input_info` after a NEW or CHANGE event.
private final class SinkInputRequest: PulseRequest {
    weak var connection: PulseConnection?
    let index: UInt32
    let token: UInt64
    var stream: SinkInput?

    init(connection: PulseConnection, index: UInt32, token: UInt64) {
        self.connection = connection
        self.index = index
        self.token = token
    }

    static let callback: pa_sink_input_info_cb_t = { _, info, eol, userdata in
        guard let request: SinkInputRequest = borrow(userdata) else { return }
        if eol == 0, let info {
            request.stream = SinkInput(info.pointee)
        } else {
            // eol < 0: no such entity, the stream is already gone.
            request.connection?.streamFetched(request.index, token: request.token, stream: request.stream)
        }
    }
}

/// `pa_context_get_client_info` for a new, changed or not yet known client.
private final class ClientRequest: PulseRequest {
    weak var connection: PulseConnection?
    let index: UInt32
    var properties: [String: String]?

    init(connection: PulseConnection, index: UInt32) {
        self.connection = connection
        self.index = index
    }

    static let callback: pa_client_info_cb_t = { _, info, eol, userdata in
        guard let request: ClientRequest = borrow(userdata) else { return }
        if eol == 0, let info {
            request.properties = PropertyList.dictionary(info.pointee.proplist)
        } else {
            request.connection?.clientFetched(request.index, properties: request.properties)
        }
    }
}

/// `pa_context_get_server_info`, for ``PulseConnection/serverDescription``.
private final class ServerInfoRequest: PulseRequest {
    weak var connection: PulseConnection?

    init(connection: PulseConnection) {
        self.connection = connection
    }

    static let callback: pa_server_info_cb_t = { _, info, userdata in
        guard let request: ServerInfoRequest = borrow(userdata) else { return }
        let description = info.map { info -> String in
            let name = info.pointee.server_name.map { String(cString: $0) } ?? "unknown server"
            let version = info.pointee.server_version.map { String(cString: $0) } ?? ""
            return version.isEmpty ? name : "\(name) \(version)"
        }
        request.connection?.serverDescribed(description, cookie: info?.pointee.cookie)
    }
}
