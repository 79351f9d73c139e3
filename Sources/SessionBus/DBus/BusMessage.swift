import CDBus

/// One D-Bus message (a `DBusMessage`, referenced while this object lives).
///
/// Built with the static constructors and ``append(_:)``; read with the header accessors and
/// ``arguments()``. Names are checked before libdbus sees them: libdbus aborts the process on an
/// invalid bus name, path, interface or member, so a bad name from elsewhere (a player's reply, a
/// request) becomes a thrown ``BusError`` here instead.
public final class BusMessage {
    /// What kind of message this is.
    public enum Kind: Int32, Sendable {
        case invalid = 0
        case methodCall = 1
        case methodReturn = 2
        case error = 3
        case signal = 4
    }

    let handle: OpaquePointer

    /// Takes over a reference the caller owns.
    init(adopting handle: OpaquePointer) {
        self.handle = handle
    }

    /// Adds a reference of its own (for messages libdbus lends to a callback).
    init(retaining handle: OpaquePointer) {
        self.handle = dbus_message_ref(handle)
    }

    deinit {
        dbus_message_unref(handle)
    }

    // MARK: - Building

    /// A method call to `destination` (nil: the bus itself decides, for peer-to-peer use).
    public static func methodCall(destination: String?, path: String, interface: String?,
                                  method: String) throws(BusError) -> BusMessage {
        if let destination { try BusName.checkBusName(destination) }
        try BusName.checkPath(path)
        if let interface { try BusName.checkInterface(interface) }
        try BusName.checkMember(method)
        guard let handle = dbus_message_new_method_call(destination, path, interface, method) else {
            throw BusError.outOfMemory
        }
        return BusMessage(adopting: handle)
    }

    /// A signal from `path`.
    public static func signal(path: String, interface: String, name: String) throws(BusError) -> BusMessage {
        try BusName.checkPath(path)
        try BusName.checkInterface(interface)
        try BusName.checkMember(name)
        guard let handle = dbus_message_new_signal(path, interface, name) else { throw BusError.outOfMemory }
        return BusMessage(adopting: handle)
    }

    /// The successful reply to this method call.
    public func methodReturn() throws(BusError) -> BusMessage {
        guard let handle = dbus_message_new_method_return(self.handle) else { throw BusError.outOfMemory }
        return BusMessage(adopting: handle)
    }

    /// An error reply to this method call. `name` must be a valid error name (`org.example.Error.X`).
    public func errorReply(name: String, text: String) throws(BusError) -> BusMessage {
        try BusName.checkInterface(name)
        guard let handle = dbus_message_new_error(self.handle, name, text) else { throw BusError.outOfMemory }
        return BusMessage(adopting: handle)
    }

    /// Appends `values` as the message's next arguments.
    public func append(_ values: [BusValue]) throws(BusError) {
        for value in values {
            guard value.isWritable else { throw BusError.invalidArgument("cannot write a value of type \(value.signature)") }
            try BusMessage.checkNames(in: value)
        }
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(handle, &iter)
        for value in values {
            guard Self.write(value, to: &iter) else { throw BusError.outOfMemory }
        }
    }

    /// Appends `values` as the message's next arguments.
    public func append(_ values: BusValue...) throws(BusError) {
        try append(values)
    }

    /// Asks the receiver not to reply (signals and fire-and-forget calls).
    public func setNoReply() {
        dbus_message_set_no_reply(handle, 1)
    }

    // MARK: - Header

    public var kind: Kind { Kind(rawValue: dbus_message_get_type(handle)) ?? .invalid }
    public var sender: String? { dbus_message_get_sender(handle).map { String(cString: $0) } }
    public var destination: String? { dbus_message_get_destination(handle).map { String(cString: $0) } }
    public var path: String? { dbus_message_get_path(handle).map { String(cString: $0) } }
    public var interface: String? { dbus_message_get_interface(handle).map { String(cString: $0) } }
    public var member: String? { dbus_message_get_member(handle).map { String(cString: $0) } }
    public var errorName: String? { dbus_message_get_error_name(handle).map { String(cString: $0) } }
    public var serial: UInt32 { dbus_message_get_serial(handle) }
    public var expectsReply: Bool { dbus_message_get_no_reply(handle) == 0 }
    /// The signature of the arguments, e.g. `ss`.
    public var argumentSignature: String { dbus_message_get_signature(handle).map { String(cString: $0) } ?? "" }

    // MARK: - Arguments

    /// Every argument, in order.
    public func arguments() -> [BusValue] {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(handle, &iter) != 0 else { return [] }
        var values: [BusValue] = []
        repeat {
            guard let value = Self.read(&iter) else { break }
            values.append(value)
        } while dbus_message_iter_next(&iter) != 0
        return values
    }

    /// The error text of an error message (its first argument, when that is a string).
    public var errorText: String? {
        guard kind == .error else { return nil }
        return arguments().first?.string
    }

    // MARK: - Reading with the iterator API

    private static func code(_ character: Unicode.Scalar) -> Int32 { Int32(character.value) }

    private static func read(_ iter: inout DBusMessageIter) -> BusValue? {
        let type = dbus_message_iter_get_arg_type(&iter)
        switch type {
        case 0:
            return nil
        case code("y"):
            var value: UInt8 = 0
            dbus_message_iter_get_basic(&iter, &value)
            return .byte(value)
        case code("b"):
            var value: dbus_bool_t = 0
            dbus_message_iter_get_basic(&iter, &value)
            return .boolean(value != 0)
        case code("n"):
            var value: Int16 = 0
            dbus_message_iter_get_basic(&iter, &value)
            return .int16(value)
        case code("q"):
            var value: UInt16 = 0
            dbus_message_iter_get_basic(&iter, &value)
            return .uint16(value)
        case code("i"):
            var value: Int32 = 0
            dbus_message_iter_get_basic(&iter, &value)
            return .int32(value)
        case code("u"):
            var value: UInt32 = 0
            dbus_message_iter_get_basic(&iter, &value)
            return .uint32(value)
        case code("x"):
            var value: Int64 = 0
            dbus_message_iter_get_basic(&iter, &value)
            return .int64(value)
        case code("t"):
            var value: UInt64 = 0
            dbus_message_iter_get_basic(&iter, &value)
            return .uint64(value)
        case code("d"):
            var value: Double = 0
            dbus_message_iter_get_basic(&iter, &value)
            return .double(value)
        case code("s"), code("o"), code("g"):
            var pointer: UnsafePointer<CChar>?
            dbus_message_iter_get_basic(&iter, &pointer)
            let text = pointer.map { String(cString: $0) } ?? ""
            return type == code("s") ? .string(text) : type == code("o") ? .objectPath(text) : .signature(text)
        case code("v"):
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            return .variant(read(&sub) ?? .unsupported(""))
        case code("a"):
            let full = signature(of: &iter)
            let element = String(full.dropFirst())
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            if element.hasPrefix("{") {
                let (key, value) = splitEntry(element)
                var entries: [BusEntry] = []
                while dbus_message_iter_get_arg_type(&sub) == code("e") {
                    var entry = DBusMessageIter()
                    dbus_message_iter_recurse(&sub, &entry)
                    if let k = read(&entry), dbus_message_iter_next(&entry) != 0, let v = read(&entry) {
                        entries.append(BusEntry(key: k, value: v))
                    }
                    dbus_message_iter_next(&sub)
                }
                return .dictionary(key: key, value: value, entries)
            }
            var items: [BusValue] = []
            while let item = read(&sub) {
                items.append(item)
                if dbus_message_iter_next(&sub) == 0 { break }
            }
            return .array(element: element, items)
        case code("r"):
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            var fields: [BusValue] = []
            while let field = read(&sub) {
                fields.append(field)
                if dbus_message_iter_next(&sub) == 0 { break }
            }
            return .structure(fields)
        default:
            // A file descriptor (reading it would dup it) or a type newer than this code.
            return .unsupported(signature(of: &iter))
        }
    }

    private static func signature(of iter: inout DBusMessageIter) -> String {
        guard let raw = dbus_message_iter_get_signature(&iter) else { return "" }
        defer { dbus_free(raw) }
        return String(cString: raw)
    }

    /// `{sv}` → (`s`, `v`): a dict entry's key is always one basic type code.
    static func splitEntry(_ element: String) -> (String, String) {
        let inner = element.dropFirst().dropLast()
        guard let first = inner.first else { return ("", "") }
        return (String(first), String(inner.dropFirst()))
    }

    // MARK: - Writing with the iterator API

    private static func write(_ value: BusValue, to iter: inout DBusMessageIter) -> Bool {
        switch value {
        case let .byte(number):
            var raw = number
            return dbus_message_iter_append_basic(&iter, code("y"), &raw) != 0
        case let .boolean(flag):
            var raw: dbus_bool_t = flag ? 1 : 0
            return dbus_message_iter_append_basic(&iter, code("b"), &raw) != 0
        case let .int16(number):
            var raw = number
            return dbus_message_iter_append_basic(&iter, code("n"), &raw) != 0
        case let .uint16(number):
            var raw = number
            return dbus_message_iter_append_basic(&iter, code("q"), &raw) != 0
        case let .int32(number):
            var raw = number
            return dbus_message_iter_append_basic(&iter, code("i"), &raw) != 0
        case let .uint32(number):
            var raw = number
            return dbus_message_iter_append_basic(&iter, code("u"), &raw) != 0
        case let .int64(number):
            var raw = number
            return dbus_message_iter_append_basic(&iter, code("x"), &raw) != 0
        case let .uint64(number):
            var raw = number
            return dbus_message_iter_append_basic(&iter, code("t"), &raw) != 0
        case let .double(number):
            var raw = number
            return dbus_message_iter_append_basic(&iter, code("d"), &raw) != 0
        case let .string(text):
            return appendText(text, type: code("s"), to: &iter)
        case let .objectPath(text):
            return appendText(text, type: code("o"), to: &iter)
        case let .signature(text):
            return appendText(text, type: code("g"), to: &iter)
        case let .variant(inner):
            return container(code("v"), signature: inner.signature, in: &iter) { sub in write(inner, to: &sub) }
        case let .array(element, items):
            return container(code("a"), signature: element, in: &iter) { sub in
                items.allSatisfy { write($0, to: &sub) }
            }
        case let .dictionary(key, valueType, entries):
            return container(code("a"), signature: "{" + key + valueType + "}", in: &iter) { sub in
                entries.allSatisfy { entry in
                    container(code("e"), signature: nil, in: &sub) { pair in
                        write(entry.key, to: &pair) && write(entry.value, to: &pair)
                    }
                }
            }
        case let .structure(fields):
            return container(code("r"), signature: nil, in: &iter) { sub in fields.allSatisfy { write($0, to: &sub) } }
        case .unsupported:
            return false
        }
    }

    private static func appendText(_ text: String, type: Int32, to iter: inout DBusMessageIter) -> Bool {
        // libdbus reads up to the first NUL, which keeps the text valid UTF-8.
        text.withCString { pointer in
            var raw: UnsafePointer<CChar>? = pointer
            return dbus_message_iter_append_basic(&iter, type, &raw) != 0
        }
    }

    private static func container(_ type: Int32, signature: String?, in iter: inout DBusMessageIter,
                                  _ body: (inout DBusMessageIter) -> Bool) -> Bool {
        var sub = DBusMessageIter()
        let opened: Bool
        if let signature {
            opened = signature.withCString { dbus_message_iter_open_container(&iter, type, $0, &sub) != 0 }
        } else {
            opened = dbus_message_iter_open_container(&iter, type, nil, &sub) != 0
        }
        guard opened else { return false }
        guard body(&sub) else {
            dbus_message_iter_abandon_container(&iter, &sub)
            return false
        }
        return dbus_message_iter_close_container(&iter, &sub) != 0
    }

    /// libdbus aborts on an invalid object path or signature inside a value: check them first.
    private static func checkNames(in value: BusValue) throws(BusError) {
        switch value {
        case let .objectPath(path): try BusName.checkPath(path)
        case let .signature(text):
            guard dbus_signature_validate(text, nil) != 0 else { throw BusError.invalidArgument("invalid signature \"\(text)\"") }
        case let .variant(inner): try checkNames(in: inner)
        case let .array(element, items):
            guard dbus_signature_validate_single(element, nil) != 0 else {
                throw BusError.invalidArgument("invalid element signature \"\(element)\"")
            }
            for item in items { try checkNames(in: item) }
        case let .dictionary(key, valueType, entries):
            guard dbus_signature_validate_single("a{" + key + valueType + "}", nil) != 0 else {
                throw BusError.invalidArgument("invalid dictionary signature \"a{\(key)\(valueType)}\"")
            }
            for entry in entries {
                try checkNames(in: entry.key)
                try checkNames(in: entry.value)
            }
        case let .structure(fields):
            for field in fields { try checkNames(in: field) }
        default:
            break
        }
    }
}

/// Checks of D-Bus names, done before libdbus sees them (it aborts on invalid ones).
enum BusName {
    static func checkBusName(_ name: String) throws(BusError) {
        guard dbus_validate_bus_name(name, nil) != 0 else { throw BusError.invalidArgument("invalid bus name \"\(name)\"") }
    }

    static func checkPath(_ path: String) throws(BusError) {
        guard dbus_validate_path(path, nil) != 0 else { throw BusError.invalidArgument("invalid object path \"\(path)\"") }
    }

    static func checkInterface(_ name: String) throws(BusError) {
        guard dbus_validate_interface(name, nil) != 0 else { throw BusError.invalidArgument("invalid interface \"\(name)\"") }
    }

    static func checkMember(_ name: String) throws(BusError) {
        guard dbus_validate_member(name, nil) != 0 else { throw BusError.invalidArgument("invalid member \"\(name)\"") }
    }
}
