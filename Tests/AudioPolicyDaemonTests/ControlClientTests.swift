import ControlProtocol
import Foundation
import Testing

@Suite("control client")
struct ControlClientTests {
    @Test func noDaemonIsSaidInWords() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("no-daemon-\(UUID().uuidString)").path
        do {
            _ = try ControlClient(path: path)
            Issue.record("connected to \(path), where nothing listens")
        } catch let error as DaemonUnreachable {
            #expect(error.path == path)
            #expect("\(error)" == "cannot reach the daemon at \(path) (is `audio-policyd run` running?): No such file or directory")
        }
    }
}
