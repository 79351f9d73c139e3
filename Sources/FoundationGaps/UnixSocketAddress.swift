import FoundationEssentials
import Glibc

/// A filesystem `sockaddr_un`: the control socket's server and clients, the ALSA plugin's socket.
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
}
