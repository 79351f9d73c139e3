import FoundationEssentials
import Glibc

/// Tells systemd how the service stands (`READY=1`, `STOPPING=1`, `STATUS=…`) through the datagram
/// socket named by `$NOTIFY_SOCKET`, the way `sd_notify(3)` does, without libsystemd.
///
/// The variable is read once and removed from the environment, so nothing the daemon starts (hooks)
/// can speak for it. Without it (not run by systemd, or `Type=simple`) every message is dropped.
public final class SystemdNotifier {
    private let address: sockaddr_un?
    private let addressLength: socklen_t
    private let fd: Int32
    /// The socket's path as given (`@name` for an abstract socket), if there is one.
    public let socketPath: String?

    public init(environment: [String: String] = ProcessInfo.processInfo.environment, unsetEnvironment: Bool = true) {
        let path = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        if unsetEnvironment { unsetenv("NOTIFY_SOCKET") }
        socketPath = path
        guard let path, let (address, length) = Self.address(for: path) else {
            self.address = nil
            self.addressLength = 0
            self.fd = -1
            return
        }
        self.address = address
        self.addressLength = length
        self.fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// Whether messages go anywhere.
    public var isActive: Bool { fd >= 0 && address != nil }

    /// Sends `message` (newline-separated `KEY=value` assignments); false if it could not be sent.
    @discardableResult
    public func send(_ message: String) -> Bool {
        guard fd >= 0, var address else { return false }
        let bytes = Array(message.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bytes.withUnsafeBytes { raw in
                    sendto(fd, raw.baseAddress, raw.count, Int32(MSG_NOSIGNAL), socketAddress, addressLength)
                }
            }
        }
        return sent == bytes.count
    }

    /// The `sockaddr_un` for a path, or for an abstract name written `@name` (a leading NUL byte,
    /// and a length that counts only the name's bytes).
    static func address(for path: String) -> (sockaddr_un, socklen_t)? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 } else if bytes.first != UInt8(ascii: "/") { return nil }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            if !abstract { raw[bytes.count] = 0 }
        }
        let offset = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path) ?? 2
        let length = offset + bytes.count + (abstract ? 0 : 1)
        return (address, socklen_t(length))
    }
}
