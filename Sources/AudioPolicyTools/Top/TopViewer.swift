import AudioPolicy
import ControlProtocol
import EventLoop
import FoundationEssentials
import Glibc

/// `audio-policyd top`: the daemon's status, live, in the terminal.
///
/// One thread and one ``MainLoop``, like the daemon: keys on standard input, signals (SIGINT,
/// SIGTERM, SIGHUP quit; SIGWINCH redraws), the daemon's event lines when it offers `subscribe`,
/// and a 1 s timer otherwise. The terminal is restored on every way out.
public final class TopViewer {
    public let socketPath: String
    public let terminal: Terminal
    private let loop = MainLoop()
    private var screen = TopScreen()
    private var refresh: MainLoop.Timer?
    private var keys: MainLoop.IOWatch?
    private var signals: MainLoop.SignalHandler?
    private var events: EventStream?
    private var meters: TopMeters?
    /// Redraws for peaks, at most ``paintInterval`` apart (meters of several streams arrive out of step).
    private var paint: MainLoop.Timer?
    static let paintInterval: UInt64 = 150_000

    public init(socketPath: String, terminal: Terminal = Terminal()) {
        self.socketPath = socketPath
        self.terminal = terminal
    }

    /// Prints one plain snapshot (for a pipe or a file); false if the daemon could not be asked.
    public func printOnce() -> Bool {
        let size = terminal.size
        screen.width = max(60, size.columns)
        screen.height = 1000
        fetch()
        var lines = screen.lines()
        while lines.last?.isEmpty == true || lines.last?.hasPrefix("q quit") == true { lines.removeLast() }
        terminal.write(lines.joined(separator: "\n") + "\n")
        return screen.status != nil
    }

    /// Runs the full-screen view until q, Ctrl-C, SIGTERM or SIGHUP; returns the exit code.
    public func run() throws -> Int32 {
        screen.style = TopScreen.Style(color: true, unicode: Terminal.prefersUnicode)
        signals = try MainLoop.SignalHandler(loop: loop, signals: [SIGINT, SIGTERM, SIGHUP, SIGWINCH]) { [unowned self] signal in
            if signal == SIGWINCH { self.draw() } else { self.loop.quit(0) }
        }
        keys = MainLoop.IOWatch(loop: loop, fd: terminal.input, events: .readable) { [unowned self] happened in
            self.keyPressed(happened)
        }
        refresh = MainLoop.Timer(loop: loop) { [unowned self] in self.tick() }
        paint = MainLoop.Timer(loop: loop) { [unowned self] in self.draw() }
        let meters = TopMeters(loop: loop)
        meters.onConnected = { [unowned self] in
            self.screen.metering = true
            self.followStreams()
        }
        meters.onPeak = { [unowned self] in
            guard let paint = self.paint, !paint.isScheduled else { return }
            paint.schedule(after: Self.paintInterval)
        }
        self.meters = meters
        terminal.enter()
        defer {
            meters.close()
            self.meters = nil
            paint = nil
            events = nil
            keys = nil
            refresh = nil
            terminal.restore()
            signals = nil
        }
        tick()
        return loop.run()
    }

    // MARK: - Events

    private func tick() {
        if events == nil { subscribe() }
        fetch()
        draw()
        // With events, the timer only keeps the clock and a lost daemon in view.
        refresh?.schedule(after: 1_000_000)
    }

    private func keyPressed(_ happened: MainLoop.IOWatch.Events) {
        var byte: UInt8 = 0
        let count = read(terminal.input, &byte, 1)
        // End of input (a closed terminal) quits too.
        if count == 0 || happened.contains(.hangup) {
            loop.quit(0)
            return
        }
        guard count == 1 else { return }
        switch byte {
        case UInt8(ascii: "q"), UInt8(ascii: "Q"), 3, 4: loop.quit(0)
        default: draw()
        }
    }

    private func subscribe() {
        guard let stream = EventStream(path: socketPath, loop: loop, onEvent: { [unowned self] in
            self.fetch()
            self.draw()
        }, onClose: { [unowned self] in
            self.events = nil
            self.screen.live = false
        }) else { return }
        events = stream
        screen.live = true
    }

    private func fetch() {
        do {
            screen.status = try StatusRequest.fetch(path: socketPath)
            screen.problem = nil
        } catch {
            screen.status = nil
            screen.problem = "cannot reach the daemon at \(socketPath): \(error)"
        }
        followStreams()
    }

    /// Meters for the streams the daemon reports (not its hooks), none for the ones gone.
    private func followStreams() {
        guard let meters else { return }
        meters.follow(Set(screen.status?.streams.compactMap(\.index) ?? []))
    }

    private func draw() {
        paint?.cancel()
        screen.peaks = meters?.peaks ?? [:]
        let size = terminal.size
        screen.width = size.columns
        screen.height = size.rows
        screen.now = Date()
        terminal.draw(screen.lines())
    }
}

// MARK: - The control socket

/// One `status` request on a connection of its own, with a 1 s deadline (a viewer must never hang on
/// a daemon that stopped answering).
enum StatusRequest {
    static func fetch(path: String) throws -> StatusReport {
        let fd = try connectControl(path: path)
        defer { close(fd) }
        try sendLine(ControlRequest(id: .number(1), op: .status).line(), to: fd)
        let line = try readLine(from: fd)
        let reply = try JSONDecoder().decode(ControlReply.self, from: Data(line.utf8))
        guard reply.ok, let status = reply.status else {
            throw ControlFailure(description: reply.error ?? "no status in the reply")
        }
        return status
    }
}

/// The daemon's event lines (`subscribe`), watched on the loop; each one calls `onEvent`. Nil when
/// the daemon does not offer `subscribe` (then the view refreshes once a second).
final class EventStream {
    private let fd: Int32
    private var watch: MainLoop.IOWatch?
    private var buffer = Data()

    init?(path: String, loop: MainLoop, onEvent: @escaping () -> Void, onClose: @escaping () -> Void) {
        guard let fd = try? connectControl(path: path) else { return nil }
        self.fd = fd
        do {
            try sendLine(ControlRequest(id: .string("top"), op: .subscribe).line(), to: fd)
            let reply = try readLine(from: fd)
            guard reply.contains(#""ok":true"#) else {
                close(fd)
                return nil
            }
        } catch {
            close(fd)
            return nil
        }
        watch = MainLoop.IOWatch(loop: loop, fd: fd, events: .readable) { [unowned self] _ in
            var chunk = [UInt8](repeating: 0, count: 16 * 1024)
            let count = recv(self.fd, &chunk, chunk.count, Int32(MSG_DONTWAIT))
            if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) {
                self.watch = nil
                onClose()
                return
            }
            // Many events may arrive at once (a ramp, a burst of streams): one refresh for all.
            if count > 0 { onEvent() }
        }
    }

    deinit {
        watch = nil
        close(fd)
    }
}

struct ControlFailure: Error, CustomStringConvertible {
    var description: String
}

private func connectControl(path: String) throws -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw ControlFailure(description: String(cString: strerror(errno))) }
    var timeout = timeval(tv_sec: 1, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
        close(fd)
        throw ControlFailure(description: "socket path too long")
    }
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard connected == 0 else {
        let reason = String(cString: strerror(errno))
        close(fd)
        throw ControlFailure(description: reason.prefix(1).lowercased() + reason.dropFirst())
    }
    return fd
}

private func sendLine(_ line: String, to fd: Int32) throws {
    let bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard sent > 0 else { throw ControlFailure(description: "send: \(String(cString: strerror(errno)))") }
        offset += sent
    }
}

/// Reads up to the first newline, byte by byte (the connection may carry event lines after it).
private func readLine(from fd: Int32) throws -> String {
    var line: [UInt8] = []
    var byte: UInt8 = 0
    while true {
        let count = recv(fd, &byte, 1, 0)
        guard count == 1 else {
            throw ControlFailure(description: count == 0 ? "the daemon closed the connection" : "no answer within 1 s")
        }
        if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
        line.append(byte)
        if line.count > 4 * 1024 * 1024 { throw ControlFailure(description: "reply too long") }
    }
}
