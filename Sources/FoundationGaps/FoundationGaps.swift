import FoundationEssentials
import Glibc

// The few things the daemon, the tools and the command line took from Foundation that
// FoundationEssentials lacks. Nothing in the binary links Foundation (nor, with it,
// FoundationInternationalization and ICU): the running daemon is smaller by what loading them cost
// (docs/benchmarks.md).

extension String {
    /// C's `printf` formatting of numbers: `String(printf: "%.1f MiB", mib)`. Strings go in by
    /// interpolation (`%@` and `%s` are not for Swift strings here).
    public init(printf format: String, _ arguments: CVarArg...) {
        var capacity = 128
        while true {
            var buffer = [CChar](repeating: 0, count: capacity)
            let length = Int(withVaList(arguments) { vsnprintf(&buffer, capacity, format, $0) })
            guard length >= 0 else {
                self = format
                return
            }
            if length < capacity {
                self = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
                return
            }
            capacity = length + 1
        }
    }

    /// The folder of a path, as `NSString.deletingLastPathComponent`: "/a/b" → "/a", "/a" → "/",
    /// "a" → "".
    public var pathFolder: String {
        let trimmed = withoutTrailingSlashes
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        let folder = String(trimmed[..<slash]).withoutTrailingSlashes
        return folder.isEmpty ? "/" : folder
    }

    /// The last part of a path, as `NSString.lastPathComponent`: "/a/b/" → "b", "/" → "/".
    public var pathLastComponent: String {
        let trimmed = withoutTrailingSlashes
        guard trimmed != "/" else { return trimmed }
        return trimmed.lastIndex(of: "/").map { String(trimmed[trimmed.index(after: $0)...]) } ?? trimmed
    }

    /// `component` under this folder, as `NSString.appendingPathComponent`.
    public func appendingPath(_ component: String) -> String {
        if isEmpty { return component }
        return withoutTrailingSlashes + (self == "/" ? "" : "/") + component
    }

    private var withoutTrailingSlashes: String {
        var text = Substring(self)
        while text.count > 1, text.hasSuffix("/") { text = text.dropLast() }
        return String(text)
    }

    /// Without spaces, tabs and line ends at either end.
    public func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0.isNewline }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(self[first...last])
    }

    /// Padded with spaces (or cut) to `length` characters, as `padding(toLength:withPad: " ", startingAt: 0)`.
    public func padded(to length: Int) -> String {
        count >= length ? String(prefix(length)) : self + String(repeating: " ", count: length - count)
    }
}

/// An error's message for people: a `LocalizedError`'s description, else the error itself.
public func errorMessage(_ error: Error) -> String {
    (error as? LocalizedError)?.errorDescription ?? String(describing: error)
}

/// Standard output or error, written unbuffered (as `FileHandle.standardOutput.write` did).
public struct StandardStream: Sendable {
    public let descriptor: Int32

    public static let output = StandardStream(descriptor: STDOUT_FILENO)
    public static let error = StandardStream(descriptor: STDERR_FILENO)

    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    public func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }
}

/// A mutex and its condition variable (pthreads), as `NSCondition`.
package final class Condition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(cond, nil)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    package func lock() { pthread_mutex_lock(mutex) }
    package func unlock() { pthread_mutex_unlock(mutex) }
    package func wait() { pthread_cond_wait(cond, mutex) }
    package func signal() { pthread_cond_signal(cond) }
    package func broadcast() { pthread_cond_broadcast(cond) }
}

/// Runs `body` on a new detached thread, as `Thread.start` (`what` names it in a failure).
package func startThread(_ what: String, _ body: @escaping () -> Void) {
    final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(&thread, nil, { context in
        Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
        return nil
    }, box)
    guard status == 0 else {
        Unmanaged<Box>.fromOpaque(box).release()
        fatalError("cannot start the \(what) thread: \(String(cString: strerror(status)))")
    }
    pthread_detach(thread)
}
