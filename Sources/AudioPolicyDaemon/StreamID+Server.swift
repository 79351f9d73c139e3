import AudioPolicy
import SoundBackend

extension OutputID {
    /// A sink, by its index on the server.
    init(sink index: UInt32) { self.init(String(index)) }
}

extension Output {
    /// What the engine needs of a sink: its properties and its active port.
    init(_ sink: Sink) {
        let port = sink.active.map { port in
            OutputPort(name: port.name, type: port.type,
                       available: OutputPort.Availability(rawValue: port.available.rawValue) ?? .unknown)
        }
        self.init(properties: sink.properties, port: port)
    }
}
