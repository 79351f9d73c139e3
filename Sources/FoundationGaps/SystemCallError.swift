import FoundationEssentials
import Glibc

/// A system call that failed: which one, on what, and the system's reason (`errno`). Unlike a
/// `POSIXError` built with a description in its user info (which Foundation on Linux drops), its
/// message survives to `localizedDescription` and to the log.
public struct SystemCallError: Error, LocalizedError, CustomStringConvertible {
    /// The call and its object, e.g. "create /run/user/1000/audio-policyd/journal.json".
    public var call: String
    public var code: POSIXErrorCode

    public init(call: String, code: POSIXErrorCode) {
        self.call = call
        self.code = code
    }

    /// The error in `errno`, for the call that just failed.
    public static func current(_ call: String) -> SystemCallError {
        SystemCallError(call: call, code: POSIXErrorCode(rawValue: errno) ?? .EIO)
    }

    public var description: String { "\(call): \(String(cString: strerror(code.rawValue)))" }
    public var errorDescription: String? { description }
}
