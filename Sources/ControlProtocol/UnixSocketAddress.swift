import FoundationEssentials
import Glibc

/// A filesystem `sockaddr_un`, for the control socket's server and clients.
public struct UnixSocketAddress {
    private var address = sockaddr_un()

    /// Fails with `ENAMETOOLONG` when `path` does not fit in `sun_path`.
    public init(path: String) throws {
        address.sun_family = sa_family_t(AF_UNIX)
        guard path.utf8.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw POSIXError(.ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
    }

    /// Calls `body` with the address as a `sockaddr` and its length (for `bind` and `connect`).
    public func withSocketAddress<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafePointer(to: address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

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
