import FoundationEssentials
import FoundationGaps
import Glibc

/// Connecting to the daemon's control socket, with the daemon's absence said as ``DaemonUnreachable``.
extension UnixSocketAddress {
    /// A connected stream socket to `path`, or the reason it could not connect.
    public static func connect(to path: String) throws -> Int32 {
        let address = try UnixSocketAddress(path: path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemCallError.current("socket") }
        guard address.withSocketAddress({ Glibc.connect(fd, $0, $1) }) == 0 else {
            let error = DaemonUnreachable(path: path, reason: String(cString: strerror(errno)))
            Glibc.close(fd)
            throw error
        }
        return fd
    }
}
