import AudioPolicyDaemon
import FoundationEssentials
import FoundationGaps
import Glibc

/// A process's resident memory and context switches, from /proc (Linux): this one's, or the daemon's
/// when the benchmark runs it apart.
public struct ProcessStats: Sendable {
    public var residentKiB: Int
    public var peakResidentKiB: Int
    /// Voluntary plus involuntary context switches of every thread: each wake-up costs at least one.
    public var contextSwitches: Int

    public static func current() -> ProcessStats { of("self") }

    public static func of(pid: Int32) -> ProcessStats { of(String(pid)) }

    private static func of(_ process: String) -> ProcessStats {
        let status = (try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Int {
            status.split(separator: "\n").first { $0.hasPrefix(name + ":") }
                .flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") } ?? 0
        }
        var switches = 0
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process)/task")) ?? []
        for task in tasks {
            let text = (try? String(contentsOfFile: "/proc/\(process)/task/\(task)/status", encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches:")
                || line.hasPrefix("nonvoluntary_ctxt_switches:") {
                switches += Int(line.split(separator: "\t").last.map { String($0).trimmingWhitespace() } ?? "") ?? 0
            }
        }
        return ProcessStats(residentKiB: field("VmRSS"), peakResidentKiB: field("VmHWM"), contextSwitches: switches)
    }
}
