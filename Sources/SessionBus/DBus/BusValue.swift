/// One D-Bus value, copied out of a message or about to be written into one.
///
/// Containers carry the signature of their elements, so that an empty array (or dictionary) still
/// has a type on the wire. Unix file descriptors (`h`) are not supported: a message that carries one
/// is read with ``unsupported(_:)`` in its place, and such a value is never written.
public indirect enum BusValue: Hashable, Sendable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// A value that carries its own type (`v`).
    case variant(BusValue)
    /// An array (`aX`) of elements of signature `element`.
    case array(element: String, [BusValue])
    /// A dictionary (`a{KV}`): an array of dict entries, in wire order.
    case dictionary(key: String, value: String, [BusEntry])
    /// A struct (`(...)`).
    case structure([BusValue])
    /// A value of a type this wrapper does not read (a file descriptor): its type code only.
    case unsupported(String)

    // MARK: - Signature

    /// The value's complete D-Bus type signature, e.g. `s`, `a{sv}`, `(ii)`.
    public var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .variant: "v"
        case let .array(element, _): "a" + element
        case let .dictionary(key, value, _): "a{" + key + value + "}"
        case let .structure(fields): "(" + fields.map(\.signature).joined() + ")"
        case let .unsupported(code): code
        }
    }

    /// Whether the value can be written: no unsupported parts, and every element of a container
    /// has the container's element signature.
    public var isWritable: Bool {
        switch self {
        case .unsupported: false
        case let .variant(inner): inner.isWritable
        case let .array(element, items): items.allSatisfy { $0.signature == element && $0.isWritable }
        case let .dictionary(key, value, entries):
            entries.allSatisfy { $0.key.signature == key && $0.value.signature == value
                && $0.key.isWritable && $0.value.isWritable }
        case let .structure(fields): !fields.isEmpty && fields.allSatisfy(\.isWritable)
        default: true
        }
    }

    // MARK: - Building

    /// `a{sv}` from a Swift dictionary (keys sorted, so messages come out the same every time).
    public static func properties(_ values: [String: BusValue]) -> BusValue {
        .dictionary(key: "s", value: "v", values.keys.sorted().compactMap { key in
            values[key].map { BusEntry(key: .string(key), value: .variant($0)) }
        })
    }

    /// `as` from strings.
    public static func strings(_ values: [String]) -> BusValue {
        .array(element: "s", values.map(BusValue.string))
    }

    // MARK: - Reading

    /// The value inside any number of variants.
    public var unwrapped: BusValue {
        if case let .variant(inner) = self { return inner.unwrapped }
        return self
    }

    /// The string of a `s`, `o` or `g` value (through variants).
    public var string: String? {
        switch unwrapped {
        case let .string(text), let .objectPath(text), let .signature(text): text
        default: nil
        }
    }

    /// The truth of a `b` value (through variants).
    public var bool: Bool? {
        if case let .boolean(value) = unwrapped { return value }
        return nil
    }

    /// Any integer value, widened (through variants); nil for non-integers and for values that do
    /// not fit.
    public var integer: Int64? {
        switch unwrapped {
        case let .byte(value): Int64(value)
        case let .int16(value): Int64(value)
        case let .uint16(value): Int64(value)
        case let .int32(value): Int64(value)
        case let .uint32(value): Int64(value)
        case let .int64(value): value
        case let .uint64(value): Int64(exactly: value)
        default: nil
        }
    }

    /// The strings of an `as` value (through variants); a lone string counts as a list of one.
    public var strings: [String]? {
        switch unwrapped {
        case let .array(_, items): items.compactMap(\.string)
        case .string: string.map { [$0] }
        default: nil
        }
    }

    /// A dictionary with string keys (`a{sX}`), each value as it is (through variants).
    public var stringDictionary: [String: BusValue]? {
        guard case let .dictionary(_, _, entries) = unwrapped else { return nil }
        var result: [String: BusValue] = [:]
        for entry in entries {
            if let key = entry.key.string { result[key] = entry.value }
        }
        return result
    }
}

/// One entry of a ``BusValue/dictionary(key:value:_:)``.
public struct BusEntry: Hashable, Sendable {
    public var key: BusValue
    public var value: BusValue

    public init(key: BusValue, value: BusValue) {
        self.key = key
        self.value = value
    }
}
