import FoundationEssentials
import FoundationGaps
import Glibc

/// Processes and their parents, read from `/proc`, to tell which player a stream belongs to:
/// browsers and Electron apps play from a child process of the one that owns the MPRIS name.
public enum ProcessTree {
    /// The parent of `pid`, from `/proc/PID/stat`; nil when the process is gone (or is pid 1).
    public static func parent(of pid: Int32) -> Int32? {
        // Read with plain system calls: this runs for every new stream, before the engine hears of it.
        guard let stat = ProcFile.text("/proc/\(pid)/stat") else { return nil }
        return parseParent(stat: stat)
    }

    /// The parent pid in the text of a `/proc/PID/stat` file: `PID (COMM) STATE PPID …`. The command
    /// name may hold spaces and parentheses, so the fields are counted from its last `)`.
    public static func parseParent(stat: String) -> Int32? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 2, let parent = Int32(fields[1]), parent > 0 else { return nil }
        return parent
    }

    /// `pid` and its ancestors, nearest first, up to (not including) pid 1 — at most `limit` of them,
    /// in case of a loop in a made-up table.
    public static func lineage(of pid: Int32, limit: Int = 64, parent: (Int32) -> Int32? = ProcessTree.parent(of:))
        -> [Int32] {
        var chain: [Int32] = []
        var current: Int32? = pid
        while let next = current, next > 1, chain.count < limit, !chain.contains(next) {
            chain.append(next)
            current = parent(next)
        }
        return chain
    }

    /// The Flatpak application id of a process (`[Application] name=` in the `.flatpak-info` file its
    /// sandbox shows at `/proc/PID/root`), if it runs in one and we may look.
    public static func flatpakID(of pid: Int32) -> String? {
        guard let text = ProcFile.text("/proc/\(pid)/root/.flatpak-info") else {
            return nil
        }
        return parseFlatpakInfo(text)
    }

    /// `name` in the `[Application]` group of a `.flatpak-info` key file.
    public static func parseFlatpakInfo(_ text: String) -> String? {
        var inApplication = false
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = String(raw).trimmingWhitespace()
            if line.hasPrefix("[") {
                inApplication = line == "[Application]"
            } else if inApplication, line.hasPrefix("name=") {
                let value = String(line.dropFirst(5)).trimmingWhitespace()
                return value.isEmpty ? nil : value
            }
        }
        return nil
    }
}
