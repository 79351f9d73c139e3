import FoundationEssentials
import Glibc

/// Who is at the other end of a Unix socket (`SO_PEERCRED`): the process, user and group the kernel
/// recorded when it connected.
///
/// The control socket trusts its peers with the session's audio, so the server checks the user
/// itself rather than relying on the socket file's mode alone (a loosened mode, a copied path, root).
public struct PeerCredentials: Hashable, Sendable {
    public var pid: Int32
    public var uid: uid_t
    public var gid: gid_t

    /// The credentials of the peer connected to `fd`, or nil if the kernel gives none.
    public init?(of fd: Int32) {
        // `struct ucred` (pid, uid, gid), which Glibc's module map leaves out without _GNU_SOURCE.
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return nil }
        pid = credentials.pid
        uid = credentials.uid
        gid = credentials.gid
    }
}
