import AudioPolicy
@testable import AudioPolicyDaemon
import Testing

/// The ramps in progress: a stepped ramp is due every step; one a backend carries by itself is handed
/// over once and due again only at its end.
@Suite("Ramp stepper")
struct RampStepperTests {
    @Test("a whole ramp is handed over once, then due only at its end; control: a stepped one is due every step")
    func wholeAndStepped() {
        var stepper = RampStepper()
        stepper.start(1, Ramp(from: 1, to: 0.1, start: 0, duration: 300), byBackend: true)
        stepper.start(2, Ramp(from: 1, to: 0.1, start: 0, duration: 300))
        #expect(stepper.nextStep(after: 0) == 0, "the whole ramp is due at once, to be handed over")

        let first = stepper.step(at: 0, ahead: RampStepper.stepInterval)
        #expect(first.whole.map(\.0) == [1] && first.whole.first?.1.to == 0.1)
        #expect(first.factors.map(\.0) == [2], "only the stepped ramp is written")
        #expect(first.completed.isEmpty)

        var handed = 0, written = 0, now = 0.0, wakeUps = 0
        while let next = stepper.nextStep(after: now) {
            now = next
            wakeUps += 1
            let due = stepper.step(at: now)
            handed += due.whole.count
            written += due.factors.filter { $0.0 == 1 }.count
            for (index, completion) in due.completed { #expect(completion == .none, "\(index)") }
            if wakeUps > 100 { break }
        }
        #expect(handed == 0 && written == 0, "never handed again, never stepped")
        #expect(now == 300 && stepper.isIdle)
        #expect(wakeUps == 20, "20 steps of 15 ms for the stepped ramp; the whole one ended with it")

        // Alone, a whole ramp wakes the timer once, at its end, and completes there with its mute.
        var alone = RampStepper()
        alone.start(3, Ramp(from: 1, to: 0, start: 0, duration: 250), then: .mute, byBackend: true)
        #expect(alone.step(at: 0).whole.count == 1)
        #expect(alone.nextStep(after: 1) == 250)
        #expect(alone.step(at: 249).completed.isEmpty)
        let end = alone.step(at: 250)
        #expect(end.completed.count == 1 && end.completed.first?.1 == .mute && alone.isIdle)
    }
}
