import CDBus

/// A D-Bus failure: an error reply from a peer, a call that got no reply, or a message we could not build.
public enum BusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The peer replied with an error (`org.freedesktop.DBus.Error.ServiceUnknown`, …).
    case reply(name: String, text: String)
    /// No session bus address, or the bus could not be reached.
    case noBus(String)
    /// The connection is closed.
    case disconnected
    /// A name, path or value libdbus would refuse.
    case invalidArgument(String)
    case outOfMemory

    public var description: String {
        switch self {
        case let .reply(name, text): text.isEmpty ? name : "\(name): \(text)"
        case let .noBus(reason): "no session bus: \(reason)"
        case .disconnected: "the bus connection is closed"
        case let .invalidArgument(text): text
        case .outOfMemory: "out of memory"
        }
    }

    /// The error name for a reply (`org.freedesktop.DBus.Error.…`).
    public var name: String {
        switch self {
        case let .reply(name, _): name
        case .noBus, .disconnected: "org.freedesktop.DBus.Error.Disconnected"
        case .invalidArgument: "org.freedesktop.DBus.Error.InvalidArgs"
        case .outOfMemory: "org.freedesktop.DBus.Error.NoMemory"
        }
    }

    /// The error a `DBusError` holds, freeing it.
    static func taking(_ error: inout DBusError) -> BusError {
        defer { dbus_error_free(&error) }
        let name = error.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
        let text = error.message.map { String(cString: $0) } ?? ""
        return .reply(name: name, text: text)
    }
}
