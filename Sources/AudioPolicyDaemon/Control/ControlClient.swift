import Foundation

/// A client of the control socket, for `status` and the hooks: one request, one reply.
public final class ControlClient {
    private let fd: Int32
    private var buffer = Data()

    public init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError.current("socket") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        guard path.utf8.count < MemoryLayout.size(ofValue: address.sun_path) else {
            Foundation.close(fd)
            throw POSIXError(.ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else {
            let error = POSIXError.current("cannot reach the daemon at \(path) (is `audio-policyd run` running?)")
            Foundation.close(fd)
            throw error
        }
    }

    deinit { Foundation.close(fd) }

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
                guard sent > 0 else { throw POSIXError.current("send") }
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
