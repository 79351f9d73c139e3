/// A name on the control socket that is one of a fixed set (an op, an event kind), or one the reader
/// does not know, kept as it was sent: the daemon quotes it in its error reply, and a client reading a
/// newer daemon's lines still reads them. On the wire it is its raw value, a JSON string.
public protocol WireName: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible
where RawValue == String {
    /// Every name this side understands, in the order error messages list them.
    static var known: [Self] { get }
    /// A name not in ``known``.
    static func unknown(_ name: String) -> Self
}

extension WireName {
    /// The known case named `rawValue`, or `.unknown(rawValue)`: never fails, so that a request with an
    /// unknown name decodes (and gets its error reply from the daemon, not a decoding error).
    public init(rawValue: String) {
        self = Self.known.first { $0.rawValue == rawValue } ?? .unknown(rawValue)
    }

    public var isKnown: Bool { Self.known.contains(self) }

    public var description: String { rawValue }

    /// The known names, comma-separated, for error messages.
    public static var knownList: String { known.map(\.rawValue).joined(separator: ", ") }
}
