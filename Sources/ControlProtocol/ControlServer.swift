import FoundationEssentials
import FoundationGaps
import Glibc

/// The daemon's control socket: a Unix stream socket (mode 0600) speaking JSON lines.
///
/// It owns the sockets, the line framing and each client's unsent output; what a request means is
/// the `onRequest` closure's business. It never waits on a client, so one client can neither stall
/// the daemon nor make it buffer without bound (docs/control-socket.md):
///
/// - sockets are non-blocking; what a client has not taken yet waits in its output, and the loop
///   sends it as the client reads;
/// - a request line longer than ``maxLine`` bytes gets an error reply and the connection is closed,
///   the rest of the line unread;
/// - while a client has more than ``readPause`` bytes unsent, its next requests stay unread: a client
///   that sends without reading slows only itself;
/// - a client with more than ``maxBacklog`` bytes unsent (a subscriber that stopped reading its
///   events) is disconnected;
/// - a peer whose user is not the daemon's (`SO_PEERCRED`) is refused: told so, and closed after its
///   first line; none of its requests reaches `onRequest`.
public final class ControlServer {
    /// Identifies one connected client, so interruptions it began can be ended when it goes away.
    public typealias ClientID = Int

    /// What a watch waits for.
    public enum Readiness: Sendable { case readable, writable }

    /// Makes the loop call `handler` whenever `fd` is ready for `readiness` (or hangs up); the
    /// returned object keeps the watch alive until it is released.
    public typealias Watch = (_ fd: Int32, _ readiness: Readiness, _ handler: @escaping () -> Void) -> AnyObject

    /// Called with each request line; returns the reply line (without the newline).
    public var onRequest: (ClientID, String) -> String = { _, _ in "" }
    /// Called when a client disconnects.
    public var onDisconnect: (ClientID) -> Void = { _ in }
    /// Called after a reply has been queued: event lines meant for that client, held back while its
    /// request was handled, can follow it now.
    public var onReplied: (ClientID) -> Void = { _ in }
    /// Called with what the log should warn about: a refused peer, a client dropped for not reading,
    /// an over-long request.
    public var onWarning: (String) -> Void = { _ in }

    public let path: String
    private let listener: Int32
    private var listenerWatch: AnyObject?
    private let watch: Watch
    private var clients: [ClientID: Client] = [:]
    private var nextClient = 1
    /// The only user whose processes are served: the daemon's own.
    private let owner = geteuid()

    /// Longest request line accepted (bytes, without the newline).
    public static let maxLine = 64 * 1024
    /// Unsent output above which a client's further requests wait unread.
    public static let readPause = 64 * 1024
    /// Unsent output above which a client is disconnected.
    public static let maxBacklog = 1024 * 1024
    /// Bytes read from a client at a time.
    static let chunk = 16 * 1024

    public init(path: String, watch: @escaping Watch) throws {
        self.path = path
        self.watch = watch
        let folder = path.pathFolder
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard listener >= 0 else { throw SystemCallError.current("socket") }
        unlink(path)
        let address: UnixSocketAddress
        do {
            address = try UnixSocketAddress(path: path)
        } catch {
            Glibc.close(listener)
            throw error
        }
        let bound = address.withSocketAddress { bind(listener, $0, $1) }
        // A deep backlog: hooks fired together (200 at once in the tests) wait in it, not in connect.
        guard bound == 0, chmod(path, 0o600) == 0, listen(listener, 512) == 0 else {
            let error = SystemCallError.current("bind \(path)")
            Glibc.close(listener)
            throw error
        }
        listenerWatch = watch(listener, .readable) { [weak self] in self?.acceptClients() }
    }

    deinit {
        clients.removeAll()
        listenerWatch = nil
        Glibc.close(listener)
        unlink(path)
    }

    /// Closes every connection and the listening socket (on shutdown).
    public func shutdown() {
        for id in clients.keys.sorted() { disconnect(id) }
        listenerWatch = nil
    }

    /// Sends one line to a client (an event line). It never waits: the line joins the client's
    /// unsent output, and a client that lets that pass ``maxBacklog`` is disconnected.
    public func send(_ line: String, to id: ClientID) {
        guard let client = clients[id] else { return }
        queue(line, to: client, id: id)
    }

    /// The process id of a connected client (`SO_PEERCRED`), as the kernel saw it connect.
    public func peerPID(of id: ClientID) -> Int32? {
        guard let pid = clients[id]?.peer?.pid, pid > 0 else { return nil }
        return pid
    }

    // MARK: - Private

    private func acceptClients() {
        while true {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            // (Glibc's module map leaves accept4 out without _GNU_SOURCE.)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            let peer = PeerCredentials(of: fd)
            let id = nextClient
            nextClient += 1
            let client = Client(fd: fd, peer: peer, refused: peer?.uid != owner)
            clients[id] = client
            if client.refused {
                // Told at once, closed after its first line: a client that writes before it reads
                // still reads why, instead of a broken pipe.
                let who = peer.map { "uid \($0.uid) (pid \($0.pid))" } ?? "a peer with no credentials"
                onWarning("control socket: refused \(who): only uid \(owner), the daemon's user, may connect")
                queue(#"{"ok":false,"error":"refused: this daemon serves only its own user"}"#, to: client, id: id)
            }
            updateWatches(client, id: id)
        }
    }

    private func readable(_ id: ClientID) {
        guard let client = clients[id] else { return }
        guard !client.dropped else { return disconnect(id) }
        var chunk = [UInt8](repeating: 0, count: Self.chunk)
        let count = recv(client.fd, &chunk, chunk.count, Int32(MSG_DONTWAIT))
        if count < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
            return disconnect(id)
        }
        // End of file: a closed client, or a half-closed one, which still gets its replies.
        if count == 0 { client.endOfInput = true } else { client.received(chunk[0..<count]) }
        serve(id)
    }

    /// Answers the client's whole lines, until its unsent output passes ``readPause``.
    private func serve(_ id: ClientID) {
        var exhausted = false
        while let client = clients[id], !client.closing, !client.dropped, client.output.count <= Self.readPause {
            guard let line = client.nextLine(maxLength: Self.maxLine) else {
                exhausted = true
                break
            }
            if client.refused {
                client.closing = true
                break
            }
            switch line {
            case .blank:
                continue
            case .tooLong:
                onWarning("control client \(id): request line over \(Self.maxLine) bytes; closing the connection")
                client.closing = true
                queue(#"{"ok":false,"error":"request line longer than \#(Self.maxLine) bytes; closing the connection"}"#,
                      to: client, id: id)
            case .notUTF8:
                queue(#"{"ok":false,"error":"malformed request: not UTF-8; expected one JSON object per line, e.g. {\"id\":1,\"op\":\"status\"}"}"#,
                      to: client, id: id)
            case let .request(text):
                let reply = onRequest(id, text)
                guard clients[id] != nil else { return }
                queue(reply, to: client, id: id)
                onReplied(id)
            }
        }
        guard let client = clients[id] else { return }
        // A client that has said all it will say, and been answered, is done.
        if client.endOfInput, exhausted { client.closing = true }
        updateWatches(client, id: id)
    }

    private func writable(_ id: ClientID) {
        guard let client = clients[id] else { return }
        guard client.flush() else {
            stopsReading(client)
            return serve(id)
        }
        // Room again: requests that waited unread are answered now.
        if client.output.count <= Self.readPause { serve(id) } else { updateWatches(client, id: id) }
    }

    /// Queues `line` for `client` and sends what the socket takes now. Never disconnects on the spot
    /// (it may run inside whatever is sending events): a client given up on is shut down, and the
    /// loop's next turn reports it gone.
    private func queue(_ line: String, to client: Client, id: ClientID) {
        guard !client.dropped, !client.deaf else { return }
        if client.output.count + line.utf8.count + 1 > Self.maxBacklog {
            onWarning("control client \(id): \(client.output.count) bytes unread, over the \(Self.maxBacklog)-byte "
                + "limit; disconnected (a subscriber must keep reading its events)")
            drop(client, id: id)
            return
        }
        client.queue(line)
        if !client.flush() { stopsReading(client) }
        updateWatches(client, id: id)
    }

    /// A client whose socket takes no more output: its replies are thrown away from now on, and what it
    /// sent before is still served (see ``Client/deaf``); it is disconnected at its end of input.
    private func stopsReading(_ client: Client) {
        client.deaf = true
        client.discardOutput()
    }

    private func drop(_ client: Client, id: ClientID) {
        client.dropped = true
        client.discardOutput()
        _ = Glibc.shutdown(client.fd, Int32(SHUT_RDWR))
        updateWatches(client, id: id)
    }

    /// Reads while the client may send more, writes while it has output waiting, and hands a finished
    /// or dropped client to the loop's next turn to disconnect.
    private func updateWatches(_ client: Client, id: ClientID) {
        if client.closing, client.output.isEmpty, !client.dropped {
            client.dropped = true
            _ = Glibc.shutdown(client.fd, Int32(SHUT_RDWR))
        }
        let reads = client.dropped
            || (!client.closing && !client.endOfInput && client.output.count <= Self.readPause)
        if !reads {
            client.readWatch = nil
        } else if client.readWatch == nil {
            client.readWatch = watch(client.fd, .readable) { [weak self] in self?.readable(id) }
        }
        let writes = !client.dropped && !client.output.isEmpty
        if !writes {
            client.writeWatch = nil
        } else if client.writeWatch == nil {
            client.writeWatch = watch(client.fd, .writable) { [weak self] in self?.writable(id) }
        }
    }

    private func disconnect(_ id: ClientID) {
        guard clients.removeValue(forKey: id) != nil else { return }
        onDisconnect(id)
    }
}
