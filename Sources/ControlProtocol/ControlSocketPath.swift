import FoundationEssentials
import Glibc

/// Where the daemon listens: `$XDG_RUNTIME_DIR/audio-policyd/control` (a private folder, mode 0700).
public enum ControlSocketPath {
    public static func `default`(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let runtime = environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 }
            ?? "/tmp/audio-policyd-\(getuid())"
        return runtime + "/audio-policyd/control"
    }
}
