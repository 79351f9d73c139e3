import Foundation

/// Counts news (server events, daemon log lines) so a test can wait for the next piece rather than
/// sleep and hope.
final class Changes: @unchecked Sendable {
    private let condition = NSCondition()
    private var count = 0

    /// Something happened: wake every wait.
    func bump() {
        condition.lock()
        count += 1
        condition.broadcast()
        condition.unlock()
    }

    /// How many things have happened so far.
    var mark: Int {
        condition.lock()
        defer { condition.unlock() }
        return count
    }

    /// Waits until something happens after `mark`; false if `deadline` passed first.
    func wait(after mark: Int, until deadline: Date) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while count == mark {
            if !condition.wait(until: deadline) { return count != mark }
        }
        return true
    }
}

/// What a probe found: the value awaited, or a description of how things stand instead.
enum Probe<Value> {
    case done(Value)
    case waiting(String)
}

/// An await that ran out of time; the message says what was awaited and what was seen last.
struct AwaitTimeout: Error, CustomStringConvertible {
    var description: String
}

extension Changes {
    /// A probe is re-run this often even without news, in case news was missed (pactl subscribe
    /// starting late) or comes from nowhere we listen to.
    static let recheck = 0.1

    /// Re-runs `probe` whenever the server or the daemon reports something, until it yields a value;
    /// throws a clear ``AwaitTimeout`` (what, how long, what was seen last) after `timeout` seconds.
    func await<Value>(_ what: String, timeout: Double, _ probe: () throws -> Probe<Value>) throws -> Value {
        let start = Date()
        let deadline = start + timeout
        while true {
            let seen = mark
            let state: String
            switch try probe() {
            case let .done(value): return value
            case let .waiting(description): state = description
            }
            if Date() >= deadline {
                throw AwaitTimeout(description: String(
                    format: "[%@] timed out after %.1f s waiting for %@; last seen: %@",
                    TestEnvironment.serverKind, timeout, what, state))
            }
            _ = wait(after: seen, until: min(deadline, Date() + Self.recheck))
        }
    }

    /// Watches for `seconds` (a window the test has to let pass, e.g. a hold and a restore ramp), running
    /// `check` on every piece of news and once at the end; the first failure is thrown at once.
    func watch(for seconds: Double, _ check: () throws -> Void) throws {
        let end = Date() + seconds
        repeat {
            let seen = mark
            try check()
            _ = wait(after: seen, until: min(end, Date() + Self.recheck))
        } while Date() < end
        try check()
    }
}
