@testable import ALSABackend
import EventLoop
import FoundationGaps
import Foundation
import Glibc

/// What the ALSA plugin does on its socket, from a test: one `SOCK_SEQPACKET` connection that sends
/// packets and collects the daemon's commands, read on the test's loop (so waiting for them wakes it).
final class PluginClient {
    private(set) var fd: Int32
    private var watch: MainLoop.IOWatch?
    /// The daemon's commands, in the order received.
    private(set) var received: [PluginMessage] = []
    /// The daemon closed the connection.
    private(set) var closedByDaemon = false

    init(path: String, loop: MainLoop) throws {
        let address = try UnixSocketAddress(path: path)
        fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0, address.withSocketAddress({ Glibc.connect(fd, $0, $1) }) == 0 else {
            throw SystemCallError.current("connect \(path)")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        watch = MainLoop.IOWatch(loop: loop, fd: fd, events: .readable) { [unowned self] _ in self.read() }
    }

    deinit {
        close()
    }

    /// A HELLO as the plugin sends it (the pid claimed is deliberately not ours: the daemon must not use it).
    /// A HELLO; `features` empty is a plugin from before any feature (one the daemon steps its ramps for).
    static func hello(binary: String = "aplay", classHint: String = "", application: String = "",
                      direction: PluginMessage.Direction = .playback,
                      features: PluginMessage.Hello.Features = []) -> PluginMessage {
        .hello(.init(pid: 1, direction: direction, binary: binary, classHint: classHint, application: application,
                     pcmName: "default", features: features))
    }

    static func state(_ state: PluginMessage.StreamState) -> PluginMessage {
        .state(.init(state: state, muted: false, gain: 1, target: 1, position: 0))
    }

    func send(_ message: PluginMessage) {
        send(bytes: message.encoded)
    }

    func send(bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Hangs up, as a client killed with SIGKILL does (no CLOSED).
    func close() {
        watch = nil
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// The last SET_GAIN received.
    /// The RAMP messages received, in order.
    var ramps: [(gain: Float, ramp: UInt32, floor: Float)] {
        received.compactMap { if case let .ramp(gain, ramp, floor) = $0 { (gain, ramp, floor) } else { nil } }
    }

    var lastGain: (gain: Float, ramp: UInt32)? {
        for message in received.reversed() {
            if case let .setGain(gain, ramp) = message { return (gain, ramp) }
        }
        return nil
    }

    private func read() {
        var buffer = [UInt8](repeating: 0, count: 512)
        while fd >= 0 {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0 { return }
            if count == 0 {
                closedByDaemon = true
                watch = nil
                return
            }
            if let message = PluginMessage(decoding: buffer[..<count]) { received.append(message) }
        }
    }
}

/// A plugin connection from a process of its own (python3), for what needs another pid than the test's:
/// it connects, sends `messages`, and holds the connection until ``close()``.
final class PluginChild {
    private let process = Process()
    private let input = Pipe()

    init(path: String, messages: [PluginMessage]) throws {
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.connect(sys.argv[1])
            for packet in sys.argv[2:]:
                s.send(bytes.fromhex(packet))
            sys.stdin.read()
            """
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, path]
            + messages.map { $0.encoded.map { String(format: "%02x", $0) }.joined() }
        process.standardInput = input
        try process.run()
    }

    deinit {
        close()
    }

    /// Ends the connection (the child exits).
    func close() {
        guard process.isRunning else { return }
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
