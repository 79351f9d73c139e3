import AudioPolicyDaemon
import ControlProtocol
import Foundation
import Testing

@Suite("systemd notification and the decision ring")
struct ServiceUnitTests {
    @Test func notifiesADatagramSocketAndIgnoresNone() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("notify").path
        let receiver = try DatagramReceiver(path: path)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": path], unsetEnvironment: false)
        #expect(notifier.isActive)
        #expect(notifier.send("READY=1"))
        #expect(try receiver.receive() == "READY=1")

        let none = SystemdNotifier(environment: [:], unsetEnvironment: false)
        #expect(!none.isActive && !none.send("READY=1"))
        // Neither a relative path nor a name too long for sockaddr_un.
        #expect(!SystemdNotifier(environment: ["NOTIFY_SOCKET": "relative"], unsetEnvironment: false).isActive)
        #expect(!SystemdNotifier(environment: ["NOTIFY_SOCKET": "/" + String(repeating: "x", count: 200)],
                                 unsetEnvironment: false).isActive)
    }

    @Test func notifiesAnAbstractSocket() throws {
        let name = "audio-policyd-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let receiver = try DatagramReceiver(path: "@" + name)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": "@" + name], unsetEnvironment: false)
        #expect(notifier.send("STOPPING=1"))
        #expect(try receiver.receive() == "STOPPING=1")
    }

    @Test func decisionRingKeepsTheLastTwentyInOrder() {
        var log = DecisionLog()
        #expect(log.recent.isEmpty)
        for i in 0..<7 { log.append(Self.record(i)) }
        #expect(log.recent.map(\.time) == (0..<7).map(Double.init))
        for i in 7..<53 { log.append(Self.record(i)) }
        #expect(log.recent.map(\.time) == (33..<53).map(Double.init))
    }

    static func record(_ i: Int) -> DecisionRecord {
        DecisionRecord(time: Double(i), stream: "\(i)", application: "app", class: "music", reason: "r", action: "a")
    }
}

/// A bound datagram socket (a path, or `@name` for an abstract one), as systemd listens.
final class DatagramReceiver {
    let fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(2 + bytes.count + (abstract ? 0 : 1))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    deinit { close(fd) }

    /// The next datagram; throws after 5 s without one.
    func receive() throws -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        guard count >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }
}
