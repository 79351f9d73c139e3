import Dispatch
import Glibc
import SessionBus

/// The sandbox check's cost on a new stream's path to its decision, when the stream's process does not
/// run the binary its properties name (a wrapper script, `pacat` carrying another app's properties):
/// then `Sandbox.identify` scans `/proc` for a sandbox whose pid it could be.
public enum SandboxBenchmark {
    /// Times `rounds` checks of this process under a binary it does not run (µs), and says how many
    /// processes there are and how many of them the scan read in full (those in other pid namespaces).
    public static func scanTimes(rounds: Int = 200) -> (times: Percentiles, processes: Int, read: Int) {
        var samples: [Double] = []
        samples.reserveCapacity(rounds)
        for _ in 0..<rounds {
            let start = DispatchTime.now().uptimeNanoseconds
            _ = Sandbox.identify(pid: getpid(), binary: "speech-dispatcher-not-this")
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1000)
        }
        return (Percentiles(samples)!, processCount(), Sandbox.sandboxedProcesses().count)
    }

    /// The processes in `/proc`.
    private static func processCount() -> Int {
        guard let directory = opendir("/proc") else { return 0 }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let first = withUnsafeBytes(of: entry.pointee.d_name) { $0.first ?? 0 }
            if first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") { count += 1 }
        }
        return count
    }
}
