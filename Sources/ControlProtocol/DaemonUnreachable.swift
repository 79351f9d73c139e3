import FoundationEssentials
import Glibc

/// Nothing answers on the control socket: no daemon runs there (or it is not ours to reach).
public struct DaemonUnreachable: Error, CustomStringConvertible, Sendable {
    public var path: String
    /// What `connect(2)` said, e.g. "No such file or directory".
    public var reason: String

    public var description: String {
        "cannot reach the daemon at \(path) (is `audio-policyd run` running?): \(reason)"
    }
}
