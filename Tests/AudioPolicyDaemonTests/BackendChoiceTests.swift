import ALSABackend
@testable import AudioPolicyDaemon
import Foundation
import FoundationGaps
import Glibc
import Testing

/// `--backend auto`'s question, is a sound server there, and `alsa-config`'s text.
@Suite("Sound backend choice and ALSA configuration")
struct BackendChoiceTests {
    /// A unix stream socket listening at a fresh path, like a sound server's native socket.
    private func listening(at path: String) throws -> Int32 {
        try FileManager.default.createDirectory(atPath: path.pathFolder, withIntermediateDirectories: true)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        let address = try UnixSocketAddress(path: path)
        #expect(address.withSocketAddress { bind(fd, $0, $1) } == 0 && listen(fd, 4) == 0)
        return fd
    }

    @Test("auto takes the sound server when its socket accepts, ALSA when nothing listens or the file is stale")
    func auto() throws {
        let scratch = try ScratchDirectory()
        let runtime = scratch.url.path
        let environment = ["XDG_RUNTIME_DIR": runtime]
        #expect(!BackendChoice.serverAnswers(environment: environment))
        let fd = try listening(at: runtime + "/pulse/native")
        #expect(BackendChoice.serverAnswers(environment: environment))
        #expect(BackendChoice.auto.resolved(environment: environment) == .pulse)
        close(fd)
        // The file stays, nobody listens (a server that died): ALSA.
        #expect(FileManager.default.fileExists(atPath: runtime + "/pulse/native"))
        #expect(BackendChoice.auto.resolved(environment: environment) == .alsa)
        #expect(BackendChoice.pulse.resolved(environment: environment) == .pulse)
    }

    @Test("PULSE_SERVER: a unix path is tried, any other address is taken as a server")
    func pulseServer() throws {
        let scratch = try ScratchDirectory()
        let path = scratch.url.appendingPathComponent("server").path
        #expect(!BackendChoice.serverAnswers(environment: ["PULSE_SERVER": "unix:\(path)"]))
        let fd = try listening(at: path)
        defer { close(fd) }
        #expect(BackendChoice.serverAnswers(environment: ["PULSE_SERVER": "unix:\(path)"]))
        #expect(BackendChoice.serverAnswers(environment: ["PULSE_SERVER": path]))
        #expect(BackendChoice.serverAnswers(environment: ["PULSE_SERVER": "tcp:localhost:4713"]))
    }

    @Test("alsa-config: the plugin by path, the default through it, a PCM per class with its hint")
    func configuration() {
        let text = ALSAConfiguration(pluginPath: "/opt/a \"b\"/lib.so", slave: nil, classes: ["navigation", "odd class"]).text
        #expect(text.contains(#"pcm_type.audiopolicy { lib "/opt/a \"b\"/lib.so" }"#))
        #expect(text.contains(#"slave { pcm "hw:0,0"; rate 48000; period_size 1024; buffer_size 4096 }"#))
        #expect(text.contains(#"pcm.!default { type plug; slave.pcm "audiopolicy_default_raw" }"#))
        #expect(text.contains(#"pcm.audiopolicy_navigation_raw { type audiopolicy; slave.pcm "audiopolicy_slave"; class "navigation" }"#))
        #expect(text.contains(#"pcm.audiopolicy_odd_class { type plug; slave.pcm "audiopolicy_odd_class_raw" }"#))
        let given = ALSAConfiguration(pluginPath: "/p.so", slave: "jack_out", classes: ["call"]).text
        #expect(!given.contains("dmix") && !given.contains("ctl.!default"))
        #expect(given.contains(#"pcm.audiopolicy_call_raw { type audiopolicy; slave.pcm "jack_out"; class "call" }"#))
    }
}
