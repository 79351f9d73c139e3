import FoundationEssentials
import FoundationGaps
import Glibc

/// A client of the control socket, for `status` and the hooks: one request, one reply.
public final class ControlClient {
    private let fd: Int32
    private var buffer = Data()

    public init(path: String) throws {
        fd = try UnixSocketAddress.connect(to: path)
    }

    deinit { Glibc.close(fd) }

    /// The connection's socket, for a caller that waits for event lines on its own loop.
    public var descriptor: Int32 { fd }

    /// Sends a request and waits for its reply.
    public func request(_ request: ControlRequest) throws -> ControlReply {
        try send(line: try request.line())
        let line = try readLine()
        return try JSONDecoder().decode(ControlReply.self, from: Data(line.utf8))
    }

    public func send(line: String) throws {
        let data = Data((line + "\n").utf8)
        try data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let sent = Glibc.send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                guard sent > 0 else { throw SystemCallError.current("send") }
                offset += sent
            }
        }
    }

    /// Reads one line; throws when the daemon closes the connection first.
    public func readLine() throws -> String {
        while true {
            if let line = nextBufferedLine() { return line }
            try receive()
        }
    }

    /// The socket, for a caller that waits on it together with other things (`poll`), as `record`
    /// waits on it and on its signals.
    public var socket: Int32 { fd }

    /// A whole line already received, if there is one; reads nothing.
    public func nextBufferedLine() -> String? {
        guard let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
        buffer.removeSubrange(buffer.startIndex...newline)
        return line
    }

    /// Reads what has arrived (waiting for something if nothing has); throws when the daemon closed the
    /// connection.
    public func receive() throws {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let count = recv(fd, &chunk, chunk.count, 0)
        guard count > 0 else { throw POSIXError(.ECONNRESET) }
        buffer.append(contentsOf: chunk[0..<count])
    }
}
