import AudioPolicy
import Testing

/// ``StreamLevel``: the one record of a stream's level and mute the daemon and the rehearsal keep, and
/// the journal's rule of what is on record.
@Suite("Stream level: the record of what the daemon did to a stream")
struct StreamLevelTests {
    static let own = ChannelVolumes(values: [52_000, 48_000])

    /// What happens to the record, for the rows below.
    enum Step: String, CaseIterable, Sendable {
        case duck, restore, fadeOut, hold, unmute, answered, theyMuted, theirLevel, heldByRecovery, yields
    }

    static func play(_ steps: [Step], writable: Bool = true) -> StreamLevel {
        var level = StreamLevel(own: own)
        for (at, step) in steps.enumerated() {
            let now = UInt64(at + 1) * 1000
            switch step {
            case .duck: _ = level.want(0.2, writable: writable)
            case .restore: _ = level.want(1, writable: writable)
            case .fadeOut: level.policyMutes(); _ = level.want(0, writable: writable)
            case .hold: level.holdForLoss()
            case .unmute: level.policyUnmutes(at: now); _ = level.want(1, writable: writable)
            case .answered: level.writesAnswered(sentBefore: now)
            case .theyMuted: level.theyMuted()
            case .theirLevel: level.theirLevel(ChannelVolumes(values: [30_000, 30_000]))
            case .heldByRecovery: level.heldByRecovery()
            case .yields: level.policyYieldsMute()
            }
        }
        return level
    }

    @Test("the journal keeps a stream exactly while a change of ours is in force or on its way back",
          arguments: [
              // steps, heard of muted now → on record
              ([], false, false),
              ([.duck], false, true),
              ([.duck, .restore], false, false),
              ([.fadeOut], true, true),
              ([.fadeOut, .unmute], false, true),
              // Its echo heard, the unmute still unanswered: on record until the answer.
              ([.fadeOut, .unmute, .answered], false, false),
              // Heard of muted again before the answer: its user's mute now, not ours.
              ([.fadeOut, .unmute], true, false),
              // Its user's mute from then on, but our fade-out's silence is still written.
              ([.fadeOut, .theyMuted], true, true),
              ([.fadeOut, .theyMuted, .restore], true, false),
              ([.heldByRecovery, .theyMuted], false, false),
              ([.duck, .theirLevel], false, false),
              ([.heldByRecovery], true, true),
              ([.heldByRecovery, .yields], true, false),
          ] as [([Step], Bool, Bool)])
    func onRecord(_ row: (steps: [Step], mutedNow: Bool, onRecord: Bool)) {
        let level = Self.play(row.steps)
        #expect(level.isChanged(mutedNow: row.mutedNow) == row.onRecord, "\(row.steps) → \(level)")
    }

    @Test("an unmute answered before it was sent is still on record")
    func unmuteAnsweredOnlyOnceSent() {
        var level = StreamLevel(own: Self.own)
        level.policyMutes()
        level.policyUnmutes(at: 5000)
        let early = level.writesAnswered(sentBefore: 5000)
        #expect(!early)
        #expect(level.policyMutedOnRecord(mutedNow: false))
        #expect(level.unmuteInFlight(mutedNow: false))
        let answered = level.writesAnswered(sentBefore: 5001)
        #expect(answered)
        #expect(!level.policyMutedOnRecord(mutedNow: false))
    }

    @Test("a fade-out overtakes an unmute still unanswered")
    func fadeOutOvertakesAnUnanswered() {
        var level = Self.play([.fadeOut, .unmute])
        level.policyMutes()
        #expect(level.policyMuted && level.unmuteSentAt == nil && !level.unmuteInFlight(mutedNow: false))
    }

    @Test("only the policy's mute can be held, and only it is unmuted as ours")
    func holdsAndUnmutesOnlyItsOwn() {
        var level = StreamLevel(own: Self.own)
        level.holdForLoss()
        #expect(!level.heldForLoss)
        let unmutedNotOurs = level.policyUnmutes(at: 1000)
        #expect(!unmutedNotOurs)
        #expect(level.unmuteSentAt == nil)
        level.policyMutes()
        level.holdForLoss()
        #expect(level.heldForLoss)
        let unmutedOurs = level.policyUnmutes(at: 2000)
        #expect(unmutedOurs)
        #expect(!level.heldForLoss && !level.policyMuted && level.unmuteSentAt == 2000)
    }

    @Test("a factor asked of a stream that cannot take it waits, and is on record only once it can")
    func wantedWaitsForAWritableStream() {
        var level = StreamLevel(own: Self.own)
        let whileUnwritable = level.want(0.2, writable: false)
        #expect(!whileUnwritable)
        #expect(level.factor == 1 && level.wanted == 0.2)
        #expect(level.isChanged(mutedNow: false, writable: true))
        #expect(!level.isChanged(mutedNow: false, writable: false))
        #expect(!level.isChanged(mutedNow: false, volumePending: true))
        let once = level.want(0.2, writable: true)
        let twice = level.want(0.2, writable: true)
        let handed = level.want(0.2, writable: true, evenIfThere: true)
        #expect(once)
        #expect(!twice, "written twice")
        #expect(handed, "a ramp handed whole is sent")
        #expect(level.volume(at: 1) == Self.own)
        #expect(level.volume(at: 0.2) == Self.own.scaled(by: 0.2))
    }

    @Test("its user's level is its own from then on, at a factor of 1")
    func theirLevelIsItsOwn() {
        let level = Self.play([.duck, .theirLevel])
        #expect(level.own == ChannelVolumes(values: [30_000, 30_000]) && level.factor == 1 && level.wanted == 1)
    }
}
