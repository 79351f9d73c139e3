/// Identifies one output: a PulseAudio sink (by index), or a fixture's output name.
public struct OutputID: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }
    public static func < (lhs: OutputID, rhs: OutputID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// An output as the engine needs to know it: the sink's properties (its device's identity, form factor,
/// bus, name for people) and its active port.
///
/// What makes an output *lost* is decided from this alone (``Engine``): the sink going away, or its active
/// port becoming unavailable or changing from headphones-like to something else. What makes a removal a
/// Bluetooth profile switch rather than a loss is the same ``device`` coming back within the policy's
/// switch window.
public struct Output: Hashable, Sendable {
    /// The sink's properties (`device.description`, `device.string`, `api.bluez5.address`,
    /// `device.form_factor`, `device.bus`, `alsa.card`, …), as the server reports them.
    public var properties: Properties
    /// The active port, if the sink has ports (null sinks and Bluetooth sinks have none or one).
    public var port: OutputPort?

    public init(properties: Properties = [:], port: OutputPort? = nil) {
        self.properties = properties
        self.port = port
    }

    /// The physical device behind the sink, the same across a Bluetooth profile switch (A2DP ↔ HFP: the
    /// sink is destroyed and another made for the same headset) and across a card profile change: the
    /// Bluetooth address, else the device string (PulseAudio's ALSA `hw:1` or Bluetooth address), else
    /// the card's bus path. Nil when nothing identifies it: then no removal is a profile switch.
    public var device: String? {
        for key in ["api.bluez5.address", "device.string", "device.bus_path", "alsa.card_name"] {
            if let value = properties[key], !value.isEmpty { return value }
        }
        return nil
    }

    /// A name for people: `WH-1000XM4`, `Built-in Audio Analog Stereo`.
    public var name: String {
        for key in ["device.description", "node.nick", "node.description", "device.product.name", "sink.name"] {
            if let value = properties[key], !value.isEmpty { return value }
        }
        return "?"
    }

    /// Whether it is worn (headphones, a headset, earbuds): by the device's form factor, the Bluetooth
    /// bus, or an active port of a headphones-like type or name.
    public var isWorn: Bool {
        let formFactor = properties["device.form_factor"]?.lowercased() ?? ""
        if ["headset", "headphone", "headphones", "hands-free", "handset", "earbud", "earbuds"].contains(formFactor) {
            return true
        }
        if properties["device.bus"]?.lowercased() == "bluetooth" || properties["api.bluez5.address"] != nil {
            return true
        }
        return port?.isWorn ?? false
    }

    /// What the output is, for reasons in logs: `headset "WH-1000XM4"`, `headphones on "Built-in
    /// Audio"`, `output "HDMI"`.
    public var label: String {
        let formFactor = properties["device.form_factor"]?.lowercased() ?? ""
        let quoted = "\"\(name)\""
        switch formFactor {
        case "headset", "hands-free", "handset": return "headset \(quoted)"
        case "headphone", "headphones", "earbud", "earbuds": return "headphones \(quoted)"
        default: break
        }
        if properties["device.bus"]?.lowercased() == "bluetooth" { return "Bluetooth device \(quoted)" }
        if properties["device.bus"]?.lowercased() == "usb" { return "USB device \(quoted)" }
        return "output \(quoted)"
    }

    /// Whether going from `self` to `next` loses what the stream was heard on without the sink going
    /// away: the active port became unavailable (a jack pulled), or it changed from a worn port
    /// (headphones, headset) to one that is not (the speakers).
    func portLost(to next: Output) -> Bool {
        guard let port else { return false }
        if port.available != .no, next.port?.available == .no, next.port?.name == port.name { return true }
        if let after = next.port, after.name != port.name, port.isWorn, !after.isWorn { return true }
        return false
    }
}

/// A sink's active port: its name, type and availability (libpulse ≥ 14 gives the type).
public struct OutputPort: Hashable, Sendable {
    /// Whether something is plugged into the port's jack.
    public enum Availability: String, Hashable, Sendable, CaseIterable {
        case yes, no, unknown
    }

    public var name: String
    /// `headphones`, `headset`, `speaker`, `line`, `hdmi`, `usb`, `bluetooth`, `unknown`, … (libpulse's
    /// `pa_device_port_type_t`, lower case).
    public var type: String
    public var available: Availability

    public init(name: String, type: String = "unknown", available: Availability = .unknown) {
        self.name = name
        self.type = type
        self.available = available
    }

    /// Headphones-like: by type, or by name where the server gives no type (`analog-output-headphones`).
    public var isWorn: Bool {
        let type = type.lowercased()
        if ["headphones", "headset", "earpiece", "handset", "handsfree", "bluetooth"].contains(type) { return true }
        if type != "unknown", !type.isEmpty { return false }
        let name = name.lowercased()
        return name.contains("headphone") || name.contains("headset")
    }
}

/// What a class does when the output its stream was heard on is lost (`on-output-loss` in `[class.NAME]`).
public enum OutputLossAction: String, Hashable, Sendable, CaseIterable {
    /// Muted at once; paused for good through its player after the switch window (muted until the user
    /// acts when it has none).
    case pause
    /// Muted at once and kept muted until the user acts (unmutes it, plays it, changes its volume).
    case mute
    /// Follows the server's move to the new output (a call: the user is talking).
    case nothing

    /// The default by kind: media pauses; calls, prompts, games and the rest follow the move.
    public static func defaultFor(_ kind: InterruptionKind) -> OutputLossAction {
        kind == .primary ? .pause : .nothing
    }
}

/// The policy's `[outputs]` section.
public struct OutputPolicy: Hashable, Sendable {
    /// How long the engine waits, the stream muted, for the same device to come back (a Bluetooth profile
    /// switch, a card profile change) before it counts the output as lost, ms.
    public var switchWindow: Milliseconds
    /// Opt-in: a stream paused (or muted) by an output's loss is resumed when the same device comes back
    /// within this long and the stream is on it — unless the user touched it meanwhile or another app took
    /// Now Playing. Nil: never (the default).
    public var resumeWhenBack: Milliseconds?

    public init(switchWindow: Milliseconds = 1000, resumeWhenBack: Milliseconds? = nil) {
        self.switchWindow = switchWindow
        self.resumeWhenBack = resumeWhenBack
    }
}
