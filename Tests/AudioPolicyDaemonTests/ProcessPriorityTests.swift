import AudioPolicyDaemon
import Foundation
import Testing

@Suite struct ProcessPriorityTests {
    /// What one asking did, seen from the thread that asked.
    private typealias Seen = (outcome: ProcessPriority.Outcome, before: Int32, after: Int32)

    private final class Result: @unchecked Sendable {
        var seen: Seen?
    }

    /// Asks for `before + change` on a thread of its own (so the test runner's threads keep their
    /// priority) and reports what that thread saw.
    private func ask(change: Int32) -> Seen {
        let result = Result()
        let done = DispatchSemaphore(value: 0)
        Thread {
            let before = ProcessPriority.currentNice
            let outcome = ProcessPriority.raise(to: before + change)
            result.seen = (outcome, before, ProcessPriority.currentNice)
            done.signal()
        }.start()
        done.wait()
        return result.seen!
    }

    @Test func raisingTakesEffectOrSaysWhyNot() {
        let (outcome, before, after) = ask(change: -3)
        switch outcome {
        case let .raised(nice):
            #expect(nice == before - 3)
            #expect(after == before - 3)
        case let .refused(nice, reason):
            #expect(nice == before)
            #expect(after == before)
            #expect(!reason.isEmpty)
        case .alreadyHigh:
            Issue.record("asked for a higher priority than the thread had, yet told it was high already")
        }
    }

    @Test func aHigherPriorityIsNeverLowered() {
        let (outcome, before, after) = ask(change: 5)
        #expect(outcome == .alreadyHigh(nice: before))
        #expect(after == before)
    }
}
