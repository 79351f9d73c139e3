import CPulse

/// A snapshot of one output (a PulseAudio sink), copied out of libpulse's `pa_sink_info` while its
/// callback ran: its properties (the device's identity, form factor, bus), its ports and the active one.
public struct Sink: Equatable, Sendable {
    /// One of the sink's ports (headphones, speaker, line out…) and whether something is plugged into it.
    public struct Port: Equatable, Sendable {
        public enum Availability: String, Equatable, Sendable {
            case unknown, no, yes
        }

        public var name: String
        public var description: String
        /// libpulse ≥ 14's `pa_device_port_type_t` in words (`headphones`, `speaker`…); `unknown` when
        /// the server does not say.
        public var type: String
        public var available: Availability

        public init(name: String, description: String = "", type: String = "unknown", available: Availability = .unknown) {
            self.name = name
            self.description = description
            self.type = type
            self.available = available
        }
    }

    public var index: UInt32
    public var name: String
    public var description: String
    public var properties: [String: String]
    public var ports: [Port]
    /// The active port's name, if the sink has ports.
    public var activePort: String?

    public init(index: UInt32, name: String, description: String = "", properties: [String: String] = [:],
                ports: [Port] = [], activePort: String? = nil) {
        self.index = index
        self.name = name
        self.description = description
        self.properties = properties
        self.ports = ports
        self.activePort = activePort
    }

    /// The active port, as described among ``ports``.
    public var active: Port? { activePort.flatMap { name in ports.first { $0.name == name } } }
}

// MARK: - C bridging

extension Sink {
    init(_ info: pa_sink_info) {
        var ports: [Port] = []
        if let list = info.ports {
            for position in 0..<Int(info.n_ports) {
                guard let port = list[position]?.pointee else { continue }
                ports.append(Port(port))
            }
        }
        self.init(index: info.index, name: info.name.map { String(cString: $0) } ?? "",
                  description: info.description.map { String(cString: $0) } ?? "",
                  properties: PropertyList.dictionary(info.proplist), ports: ports,
                  activePort: info.active_port.flatMap { $0.pointee.name.map { String(cString: $0) } })
        if properties["sink.name"] == nil { properties["sink.name"] = name }
        if properties["device.description"] == nil, !description.isEmpty { properties["device.description"] = description }
    }
}

extension Sink.Port {
    init(_ info: pa_sink_port_info) {
        let available: Availability = switch info.available {
        case Int32(PA_PORT_AVAILABLE_YES.rawValue): .yes
        case Int32(PA_PORT_AVAILABLE_NO.rawValue): .no
        default: .unknown
        }
        self.init(name: info.name.map { String(cString: $0) } ?? "",
                  description: info.description.map { String(cString: $0) } ?? "",
                  type: Self.typeName(info.type), available: available)
    }

    /// `pa_device_port_type_t` (libpulse 14) in words.
    static func typeName(_ type: UInt32) -> String {
        let names = ["unknown", "aux", "speaker", "headphones", "line", "mic", "headset", "handset", "earpiece",
                     "spdif", "hdmi", "tv", "radio", "video", "usb", "bluetooth", "portable", "handsfree", "car",
                     "hifi", "phone", "network", "analog"]
        return Int(type) < names.count ? names[Int(type)] : "unknown"
    }
}
