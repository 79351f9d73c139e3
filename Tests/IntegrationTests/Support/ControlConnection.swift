import Foundation
import AudioPolicyDaemon

/// One connection to the daemon's control socket, speaking JSON lines. Every read has a deadline, so
/// a daemon that stops answering fails the test instead of hanging it.
final class ControlConnection {
    private let fd: Int32
    private var buffer = Data()

    init(path: String, timeout: Double = 5) throws {
        fd = try UnixSocketAddress.connect(to: path)
        var interval = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { Foundation.close(fd) }

    /// Sends `line` and returns the reply line.
    func request(_ line: String) throws -> String {
        try send(line)
        return try readLine()
    }

    func send(_ line: String) throws {
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Foundation.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard sent > 0 else { throw Self.failure("send") }
            offset += sent
        }
    }

    func readLine() throws -> String {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return line
            }
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            let count = recv(fd, &chunk, chunk.count, 0)
            guard count > 0 else {
                throw count == 0 ? CommandFailure(description: "the daemon closed the control connection")
                    : Self.failure("no reply from the daemon")
            }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    private static func failure(_ what: String) -> CommandFailure {
        CommandFailure(description: "\(what): \(String(cString: strerror(errno)))")
    }
}
