import ControlProtocol
import FoundationGaps
import Foundation

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
        try send(bytes: Array((line + "\n").utf8))
    }

    /// Sends raw bytes (a fuzzed line, half a line, not UTF-8), all of them.
    func send(bytes: [UInt8]) throws {
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

    /// Sends what it can of `bytes` without waiting; how many bytes went.
    func sendNow(_ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBytes { Foundation.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
    }

    /// Closes the connection both ways at once, unread replies and all (the object stays, unusable).
    func close() { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }

    /// Shuts down the writing side (a half-closed connection): the daemon reads an end of file.
    func closeWriting() { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }

    /// The next line, or nil if none arrives within `seconds` (the connection stays usable).
    func readLine(within seconds: Double) throws -> String? {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let deadline = Date().addingTimeInterval(seconds)
        while !buffer.contains(UInt8(ascii: "\n")) {
            let left = deadline.timeIntervalSinceNow
            guard left > 0, poll(&descriptor, 1, Int32(left * 1000)) > 0 else { return nil }
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            let count = recv(fd, &chunk, chunk.count, 0)
            guard count > 0 else {
                throw count == 0 ? CommandFailure(description: "the daemon closed the control connection")
                    : Self.failure("recv")
            }
            buffer.append(contentsOf: chunk[0..<count])
        }
        return try readLine()
    }

    /// Reads whatever arrives within `seconds` without keeping it; how many line ends it held.
    func discardAvailable(within seconds: Double) -> Int {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, Int32(seconds * 1000)) > 0 else { return 0 }
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        let count = recv(fd, &chunk, chunk.count, Int32(MSG_DONTWAIT))
        guard count > 0 else { return 0 }
        return chunk.withUnsafeBufferPointer { bytes in
            var lines = 0
            for index in 0..<count where bytes[index] == UInt8(ascii: "\n") { lines += 1 }
            return lines
        }
    }

    /// Reads until the daemon closes the connection; the lines it sent first. Throws if it stays open
    /// past the read deadline.
    func readToEnd() throws -> [String] {
        var lines: [String] = []
        while true {
            do {
                lines.append(try readLine())
            } catch let error as CommandFailure
                where error.description.contains("closed") || error.description.contains(String(cString: strerror(ECONNRESET))) {
                return lines
            }
        }
    }

    private static func failure(_ what: String) -> CommandFailure {
        CommandFailure(description: "\(what): \(String(cString: strerror(errno)))")
    }
}
