@testable import PulseBackend
import Testing

/// A drain waits for every acknowledged request sent before it, whatever order the answers come in
/// (pipewire-pulse answers writes after a round trip sent later).
@Suite struct PendingAnswersTests {
    @Test func aDrainWaitsForWritesAnsweredAfterItsRoundTrip() {
        var pending = PendingAnswers()
        var done = 0
        let mute = pending.sent()
        let unmute = pending.sent()
        let before = pending.mark()
        let later = pending.sent()
        // The round trip is answered first: two writes sent before it are still out.
        for ready in pending.whenAnswered(before: before, { done += 1 }) { ready() }
        #expect(done == 0)
        for ready in pending.ended(unmute) { ready() }
        #expect(done == 0)
        for ready in pending.ended(mute) { ready() }
        #expect(done == 1)
        // A request sent after the drain does not hold it, and it is not run twice.
        for ready in pending.ended(later) { ready() }
        #expect(done == 1)
    }

    @Test func aDrainWithNothingOutIsDoneAtOnceAndALaterRequestDoesNotHoldIt() {
        var pending = PendingAnswers()
        let first = pending.sent()
        _ = pending.ended(first)
        let before = pending.mark()
        _ = pending.sent()
        #expect(pending.whenAnswered(before: before, {}).count == 1)
    }
}
