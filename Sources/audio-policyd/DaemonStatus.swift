import ArgumentParser
import AudioPolicyDaemon
import ControlProtocol
import FoundationEssentials
import Glibc

/// Asks the running daemon for its status, for the commands that show it.
enum DaemonStatus {
    static func fetch(path: String) throws -> StatusReport {
        let client = try ControlClient(path: path)
        let reply = try client.request(ControlRequest(id: .number(1), op: .status))
        guard reply.ok, let status = reply.status else {
            throw ValidationError(reply.error ?? "the daemon sent no status")
        }
        return status
    }

    /// Pretty, stable JSON for people and scripts.
    static func json<Value: Encodable>(_ value: Value) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
