/// One message of the i3 IPC protocol, which sway speaks too: the magic `i3-ipc`, the payload's length
/// and the message type (32-bit words in the host's byte order, as the protocol says: little-endian on
/// x86 and ARM), then the JSON payload.
///
/// A type of its own so the framing is read and tested apart from what the focus source makes of it:
/// a stream socket hands over bytes in any cut, and one read may hold half a message or several.
struct SwayIPCMessage: Equatable {
    var type: UInt32
    var payload: [UInt8]

    static let magic = Array("i3-ipc".utf8)
    static let headerSize = magic.count + 8
    /// A payload larger than this is not an IPC peer talking (a tree of thousands of windows is ~1 MiB).
    static let largestPayload = 64 << 20

    /// Requests (the replies carry the same type).
    static let subscribe: UInt32 = 2
    static let getTree: UInt32 = 4
    /// Events have the high bit set; the rest is the event's number.
    static let eventBit: UInt32 = 0x8000_0000
    static let workspaceEvent = eventBit | 0
    static let windowEvent = eventBit | 3

    init(type: UInt32, payload: [UInt8] = []) {
        self.type = type
        self.payload = payload
    }

    init(type: UInt32, json: String) {
        self.init(type: type, payload: Array(json.utf8))
    }

    /// The bytes on the wire.
    var encoded: [UInt8] {
        var bytes = Self.magic
        for value in [UInt32(payload.count), type] {
            withUnsafeBytes(of: value) { bytes.append(contentsOf: $0) }
        }
        return bytes + payload
    }

    /// What does not frame as i3 IPC: the peer is not sway or i3.
    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    /// Takes the whole messages off the front of `buffer`, leaving a partial one there for the next read.
    static func take(from buffer: inout [UInt8]) throws -> [SwayIPCMessage] {
        var messages: [SwayIPCMessage] = []
        var start = 0
        while buffer.count - start >= headerSize {
            guard buffer[start..<start + magic.count].elementsEqual(magic) else {
                throw Malformed(description: "no i3-ipc magic at the start of a message")
            }
            let length = Int(word(buffer, at: start + magic.count))
            let type = word(buffer, at: start + magic.count + 4)
            guard length <= largestPayload else { throw Malformed(description: "a message of \(length) bytes") }
            guard buffer.count - start - headerSize >= length else { break }
            let body = start + headerSize
            messages.append(SwayIPCMessage(type: type, payload: Array(buffer[body..<body + length])))
            start = body + length
        }
        buffer.removeFirst(start)
        return messages
    }

    private static func word(_ bytes: [UInt8], at offset: Int) -> UInt32 {
        bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
    }
}
