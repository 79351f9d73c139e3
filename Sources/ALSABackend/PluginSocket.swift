import FoundationEssentials
import FoundationGaps
import Glibc

/// The listening `SOCK_SEQPACKET` socket the ALSA plugin connects to, once per PCM stream.
///
/// The plugin finds it at `$XDG_RUNTIME_DIR/audio-policyd/alsa`, else `/run/audio-policyd/alsa` (a
/// system-wide daemon); ``defaultPath(environment:)`` says the same, so both agree without configuration.
/// A socket file left by a daemon that died is removed at start, and the file is removed again when
/// the socket closes, so a plugin meets either a live daemon or no file at all.
final class PluginSocket {
    /// The path bound.
    let path: String
    /// The listening descriptor (non-blocking, close-on-exec).
    let fd: Int32

    /// Where the plugin looks by default.
    static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return runtime + "/audio-policyd/alsa"
        }
        return "/run/audio-policyd/alsa"
    }

    /// Binds and listens at `path` (its folder made, mode 0700; the socket mode 0600).
    init(path: String) throws {
        self.path = path
        let folder = path.pathFolder
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let address = try UnixSocketAddress(path: path)
        fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw SystemCallError.current("socket") }
        unlink(path)
        // Bound with a private umask, so that no client can connect between bind and chmod.
        let mask = umask(0o177)
        let bound = address.withSocketAddress { bind(fd, $0, $1) }
        umask(mask)
        // A deep backlog: a plugin's connect never waits, and a full backlog reads to it as no daemon.
        guard bound == 0, chmod(path, 0o600) == 0, listen(fd, 256) == 0 else {
            let error = SystemCallError.current("bind \(path)")
            Glibc.close(fd)
            throw error
        }
    }

    deinit {
        Glibc.close(fd)
        unlink(path)
    }

    /// A connection waiting to be accepted (non-blocking, close-on-exec), with its peer's process id,
    /// or nil when none waits.
    func accept() -> (fd: Int32, pid: Int32)? {
        while true {
            let client = Glibc.accept(fd, nil, nil)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return nil
            }
            // (Glibc's module map leaves accept4 out without _GNU_SOURCE.)
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
            guard let peer = PeerCredentials(of: client) else {
                Glibc.close(client)
                continue
            }
            return (client, peer.pid)
        }
    }
}
