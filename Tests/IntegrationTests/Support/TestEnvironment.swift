import Foundation

/// Where the integration tests find the sound server, the daemon binary and the package.
enum TestEnvironment {
    static let variables = ProcessInfo.processInfo.environment

    /// The private sound server scripts/sound-server started, if any (`PULSE_SERVER`).
    static let soundServer: String? = variables["PULSE_SERVER"].flatMap { $0.isEmpty ? nil : $0 }

    /// Why the tests that need a sound server cannot run, when they cannot (``Trait/needs(_:sourceLocation:)``).
    static var soundServerMissing: String? { soundServer == nil ? "no sound server (PULSE_SERVER): run scripts/test" : nil }

    /// `pulseaudio` or `pipewire` (`AUDIO_POLICYD_SERVER_KIND`, set by scripts/test), for messages.
    static let serverKind = variables["AUDIO_POLICYD_SERVER_KIND"] ?? "unknown server"

    /// The package's root folder (this file is Tests/IntegrationTests/Support/TestEnvironment.swift).
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The daemon under test: `AUDIO_POLICYD_BIN`, else the package's debug build.
    static let daemonBinary = variables["AUDIO_POLICYD_BIN"].flatMap { $0.isEmpty ? nil : $0 }
        ?? packageRoot.appendingPathComponent(".build/debug/audio-policyd").path

    /// The daemon-only executable next to ``daemonBinary`` (`swift build` and `make install` put it
    /// there), which `audio-policyd run` hands over to.
    static let daemonOnlyBinary = URL(fileURLWithPath: daemonBinary).deletingLastPathComponent()
        .appendingPathComponent("audio-policyd-daemon").path

    /// The default policy as shipped.
    static let defaultPolicy = packageRoot.appendingPathComponent("policies/default.toml")

    /// A folder for this test process's generated files (tones); removed when the process exits.
    static let scratch: URL = {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("audio-policyd-itest-\(getpid())", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: TestEnvironment.scratch) }
        return url
    }()

    /// A new private folder (for one daemon's runtime files, one recording, one policy).
    static func temporaryFolder(_ prefix: String) throws -> URL {
        var template = Array(FileManager.default.temporaryDirectory
            .appendingPathComponent("\(prefix).XXXXXX").path.utf8CString)
        guard let made = mkdtemp(&template) else {
            throw CommandFailure(description: "mkdtemp: \(String(cString: strerror(errno)))")
        }
        return URL(fileURLWithPath: String(cString: made), isDirectory: true)
    }
}
