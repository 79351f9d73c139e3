
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
