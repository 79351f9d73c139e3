import AudioPolicy
import FoundationEssentials

extension AppIdentity {
    /// The identity of a window's process: its pid, and its binary (`/proc/PID/exe`'s last part, else
    /// `/proc/PID/comm`) unless a name is given, so that a window whose process is not the one that plays
    /// (Wine, Chromium's audio service) still finds its app's streams by binary.
    init(process pid: Int, name: String?) {
        self.init(pid: pid, name: name ?? Self.binary(of: pid))
    }

    private static func binary(of pid: Int) -> String? {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe"),
           let last = path.split(separator: "/").last {
            return String(last.hasSuffix(" (deleted)") ? last.dropLast(" (deleted)".count) : last)
        }
        let comm = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)
        return comm?.split(separator: "\n").first.map(String.init)
    }
}
