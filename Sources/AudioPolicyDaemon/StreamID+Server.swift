import AudioPolicy
import SoundServer

/// The engine's names for the sound server's streams: a sink input by its index, a capture (source
/// output) as `capture-INDEX`, so the two never collide.
extension StreamID {
    init(sinkInput index: UInt32) { self.init(String(index)) }

    init(capture index: UInt32) { self.init("capture-\(index)") }

    /// The sink input this names, if it names one.
    var sinkInput: UInt32? { UInt32(rawValue) }
}

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
