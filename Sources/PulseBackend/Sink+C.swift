import CPulse
import SoundBackend

/// Copied out of libpulse's info structure while its callback runs.
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
