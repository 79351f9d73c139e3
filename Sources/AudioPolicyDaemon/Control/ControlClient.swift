import Foundation

/// A client of the control socket, for `status` and the hooks: one request, one reply.
public final class ControlClient {
    private let fd: Int32
    private var buffer = Data()

    public init(path: String) throws {
        fd = try UnixSocketAddress.connect(to: path)
    }

    deinit { Foundation.close(fd) }

    /// The connection's socket, for a caller that waits for event lines on its own loop.
    public var descriptor: Int32 { fd }

    /// Sends a request and waits for its reply.
    public func request(_ request: ControlRequest) throws -> ControlReply {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        try send(line: String(decoding: try encoder.encode(request), as: UTF8.self))
        let line = try readLine()
        return try JSONDecoder().decode(ControlReply.self, from: Data(line.utf8))
    }

    public func send(line: String) throws {
        let data = Data((line + "\n").utf8)
        try data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let sent = Foundation.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                guard sent > 0 else { throw SystemCallError.current("send") }
                offset += sent
            }
        }
    }

    /// Reads one line; throws when the daemon closes the connection first.
    public func readLine() throws -> String {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            let count = recv(fd, &chunk, chunk.count, 0)
            guard count > 0 else { throw POSIXError(.ECONNRESET) }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }
}
