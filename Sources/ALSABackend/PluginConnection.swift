import EventLoop
import Glibc

/// One plugin's connection (one ALSA PCM in one client): its packets in, the daemon's commands out.
///
/// It never waits on the client: the socket is non-blocking, a command that does not fit the socket
/// buffer is dropped (the next one carries the level anyway), and a readable wake-up reads at most
/// ``packetsPerWakeUp`` packets, so one client cannot hold the loop. A client is let go — as if it had
/// closed — when it sends more than ``malformedLimit`` packets the protocol does not allow, or more than
/// ``floodLimit`` packets within a second (the plugin sends a few dozen at most): a real plugin never
/// does either, and what it was playing goes back to unity by itself when the connection drops.
final class PluginConnection {
    static let packetsPerWakeUp = 32
    static let malformedLimit = 64
    static let floodLimit = 1000

    /// The peer's process id, from `SO_PEERCRED` (not the packet's word).
    let pid: pid_t
    /// Called with each packet the protocol allows from a plugin.
    var onMessage: (PluginMessage) -> Void = { _ in }
    /// Called once when the connection ends: EOF (a close, or a client killed), an error, or let go.
    var onEnd: (String) -> Void = { _ in }

    private let fd: Int32
    private var watch: MainLoop.IOWatch?
    private var malformed = 0
    private var windowStart: UInt64 = 0
    private var packetsInWindow = 0

    /// Takes over `fd` (accepted, non-blocking) and reads it on `loop`.
    init(fd: Int32, pid: pid_t, loop: MainLoop) {
        self.fd = fd
        self.pid = pid
        watch = MainLoop.IOWatch(loop: loop, fd: fd, events: .readable) { [unowned self] _ in self.readable() }
    }

    deinit {
        close()
    }

    /// Whether the connection is still open.
    var isOpen: Bool { watch != nil }

    /// Sends one command; never waits (a full socket buffer drops it).
    func send(_ message: PluginMessage) {
        guard isOpen else { return }
        let bytes = message.encoded
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)) }
    }

    /// Closes the socket without a word to anyone (``onEnd`` is not called).
    func close() {
        guard watch != nil else { return }
        watch = nil
        Glibc.close(fd)
    }

    // MARK: - Reading

    private func readable() {
        var buffer = [UInt8](repeating: 0, count: PluginMessage.largestSize + 1)
        for _ in 0..<Self.packetsPerWakeUp {
            // MSG_TRUNC: the packet's real length, even when it is longer than the buffer.
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT) | Int32(MSG_TRUNC)) }
            if count < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK { return }
                if errno == EINTR { continue }
                return end("receive: \(String(cString: strerror(errno)))")
            }
            // A zero-length read is EOF on a SEQPACKET socket (an empty packet reads the same, and is
            // no packet of this protocol).
            if count == 0 { return end("closed") }
            guard countPacket() else { return end("flooding: over \(Self.floodLimit) packets in a second") }
            guard count <= PluginMessage.largestSize, let message = PluginMessage(decoding: buffer[..<count]),
                  message.isFromPlugin else {
                malformed += 1
                if malformed > Self.malformedLimit { return end("over \(Self.malformedLimit) malformed packets") }
                continue
            }
            onMessage(message)
            // The handler may have let the connection go.
            guard isOpen else { return }
        }
    }

    /// Counts a packet in the current second; false once the client floods.
    private func countPacket() -> Bool {
        let now = MainLoop.monotonicMicroseconds()
        if now &- windowStart >= 1_000_000 {
            windowStart = now
            packetsInWindow = 0
        }
        packetsInWindow += 1
        return packetsInWindow <= Self.floodLimit
    }

    private func end(_ reason: String) {
        close()
        onEnd(reason)
    }
}
