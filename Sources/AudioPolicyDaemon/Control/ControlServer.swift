import Foundation

/// The daemon's control socket: a Unix stream socket (mode 0600) speaking JSON lines.
///
/// It owns the sockets and the line framing; what a request means is the `onRequest` closure's
/// business. It does no work of its own between requests: the loop wakes it only when a socket is
/// readable.
public final class ControlServer {
    /// Identifies one connected client, so interruptions it began can be ended when it goes away.
    public typealias ClientID = Int

    /// Makes the loop call `handler` whenever `fd` is readable; the returned object keeps the watch
    /// alive until it is released.
    public typealias Watch = (_ fd: Int32, _ handler: @escaping () -> Void) -> AnyObject

    /// Called with each request line; returns the reply line (without the newline).
    public var onRequest: (ClientID, String) -> String = { _, _ in "" }
    /// Called when a client disconnects.
    public var onDisconnect: (ClientID) -> Void = { _ in }
    /// Called after a reply has been written: event lines meant for that client, held back while its
    /// request was handled, can follow it now.
    public var onReplied: (ClientID) -> Void = { _ in }

    public let path: String
    private let listener: Int32
    private var listenerWatch: AnyObject?
    private let watch: Watch
    private var clients: [ClientID: Client] = [:]
    private var nextClient = 1

    /// Longest request line accepted.
    static let maxLine = 64 * 1024

    private final class Client {
        let fd: Int32
        var buffer = Data()
        var watch: AnyObject?
        init(fd: Int32) { self.fd = fd }
        deinit { Foundation.close(fd) }
    }

    public init(path: String, watch: @escaping Watch) throws {
        self.path = path
        self.watch = watch
        let folder = (path as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard listener >= 0 else { throw SystemCallError.current("socket") }
        unlink(path)
        let address: UnixSocketAddress
        do {
            address = try UnixSocketAddress(path: path)
        } catch {
            Foundation.close(listener)
            throw error
        }
        let bound = address.withSocketAddress { bind(listener, $0, $1) }
        guard bound == 0, chmod(path, 0o600) == 0, listen(listener, 16) == 0 else {
            let error = SystemCallError.current("bind \(path)")
            Foundation.close(listener)
            throw error
        }
        listenerWatch = watch(listener) { [weak self] in self?.acceptClients() }
    }

    deinit {
        clients.removeAll()
        listenerWatch = nil
        Foundation.close(listener)
        unlink(path)
    }

    /// Closes every connection and the listening socket (on shutdown).
    public func shutdown() {
        for id in Array(clients.keys) { disconnect(id) }
        listenerWatch = nil
    }

    /// Sends one line to a client that asked to hear events (`subscribe`). It never waits: a client
    /// that has stopped reading, so that its socket buffer is full, is disconnected rather than allowed
    /// to stall the daemon.
    public func send(_ line: String, to id: ClientID) {
        guard let client = clients[id] else { return }
        // Shut down rather than disconnect here: the read watch reports the end on the next loop
        // iteration, so the disconnect handling never runs inside whatever is sending.
        if !write(line, to: client, wait: false) { _ = Glibc.shutdown(client.fd, Int32(SHUT_RDWR)) }
    }

    /// The process id of a connected client (`SO_PEERCRED`), as the kernel saw it connect.
    public func peerPID(of id: ClientID) -> Int32? {
        guard let client = clients[id] else { return nil }
        // `struct ucred` (pid, uid, gid), which Glibc's module map leaves out without _GNU_SOURCE.
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var length = socklen_t(MemoryLayout<(Int32, UInt32, UInt32)>.size)
        guard getsockopt(client.fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0, credentials.pid > 0 else {
            return nil
        }
        return credentials.pid
    }

    // MARK: - Private

    private func acceptClients() {
        while true {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { return }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            // Replies are small; a client that doesn't read them for a second is dropped.
            var timeout = timeval(tv_sec: 1, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let id = nextClient
            nextClient += 1
            let client = Client(fd: fd)
            clients[id] = client
            client.watch = watch(fd) { [weak self] in self?.read(from: id) }
        }
    }

    private func read(from id: ClientID) {
        guard let client = clients[id] else { return }
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let count = recv(client.fd, &chunk, chunk.count, Int32(MSG_DONTWAIT))
        if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) {
            disconnect(id)
            return
        }
        guard count > 0 else { return }
        client.buffer.append(contentsOf: chunk[0..<count])
        while let newline = client.buffer.firstIndex(of: UInt8(ascii: "\n")) {
            let line = String(decoding: client.buffer[client.buffer.startIndex..<newline], as: UTF8.self)
            client.buffer.removeSubrange(client.buffer.startIndex...newline)
            if line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            write(onRequest(id, line), to: client)
            guard clients[id] != nil else { return }
            onReplied(id)
            guard clients[id] != nil else { return }
        }
        if client.buffer.count > Self.maxLine {
            write(#"{"id":null,"ok":false,"error":"request line longer than 65536 bytes"}"#, to: client)
            disconnect(id)
        }
    }

    /// Writes a line; false if it could not be written whole (with `wait: false`, also when the
    /// socket buffer is full).
    @discardableResult
    private func write(_ line: String, to client: Client, wait: Bool = true) -> Bool {
        var data = Data(line.utf8)
        data.append(UInt8(ascii: "\n"))
        let flags = Int32(MSG_NOSIGNAL) | (wait ? 0 : Int32(MSG_DONTWAIT))
        return data.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return true }
            var offset = 0
            while offset < raw.count {
                let sent = Foundation.send(client.fd, base + offset, raw.count - offset, flags)
                if sent < 0, errno == EINTR { continue }
                if sent <= 0 { return false }
                offset += sent
            }
            return true
        }
    }

    private func disconnect(_ id: ClientID) {
        guard clients.removeValue(forKey: id) != nil else { return }
        onDisconnect(id)
    }
}
