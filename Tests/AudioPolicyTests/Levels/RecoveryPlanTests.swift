import AudioPolicy
import Testing

/// ``RecoveryPlan``: which journal entry is the word on a stream, which streams are still there and what
/// each gets, which ended ones have a saved entry to repair — the plan the daemon and the levels
/// rehearsal both carry out.
@Suite("Levels: the recovery plan")
struct RecoveryPlanTests {
    /// One journal entry, as both sides hand it to the plan.
    struct Entry {
        var written: WrittenStream
        var heldForLoss = false
    }

    static let own = ChannelVolumes(values: [52429, 52429])
    static let ducked = ChannelVolumes(values: [26214, 26214])

    static func entry(_ index: UInt32, key: String? = "app-music", own: ChannelVolumes = own, policyMuted: Bool = false,
                      heldForLoss: Bool = false, server: UInt32? = 7) -> Entry {
        Entry(written: WrittenStream(index: index, key: key, own: own, muted: false, policyMuted: policyMuted,
                                     duckLevels: [0.5], savedMute: nil, server: server),
              heldForLoss: heldForLoss)
    }

    static func plan(_ entries: [Entry], present: [UInt32: RecoveryPlan<Entry>.Present]) -> RecoveryPlan<Entry> {
        RecoveryPlan(entries, written: \.written, heldForLoss: \.heldForLoss) { present[$0.written.index] }
    }

    @Test("a stream still there gets its step; one gone with a key and a level is repaired, one without is not")
    func keptAndGone() {
        let plan = Self.plan([Self.entry(1), Self.entry(2), Self.entry(3, key: nil), Self.entry(4, own: ChannelVolumes(values: []))],
                             present: [1: .init(volume: Self.ducked, muted: false, writable: true)])
        #expect(plan.kept.map(\.index) == [1])
        #expect(plan.kept.first?.step == RecoveryStep(restore: Self.own))
        #expect(plan.gone.map(\.written.index) == [2, 3, 4])
        #expect(plan.goneIndexes == [2, 3, 4])
        #expect(plan.repairable.map(\.written.index) == [2])
        #expect(plan.putBack == [1] && plan.holds.isEmpty)
    }

    @Test("the newest entry of a stream is the word on it: a stream journaled twice gets one step, the later entry's")
    func newestEntryWins() {
        // Recovering (the earlier run's entry: muted by the policy), then this run's (put back, unmuted).
        let plan = Self.plan([Self.entry(1, policyMuted: true), Self.entry(2), Self.entry(1)],
                             present: [1: .init(volume: Self.own, muted: true, writable: true),
                                       2: .init(volume: Self.own, muted: false, writable: true)])
        #expect(plan.entries.map(\.written.index) == [2, 1])
        // The later entry has no mute of the policy's: the user's mute stays.
        #expect(plan.kept.map(\.step) == [RecoveryStep(), RecoveryStep()])
        #expect(plan.putBack.isEmpty)
    }

    @Test("a held stream still muted is kept muted and held; one whose level someone set since is unmuted at it")
    func holds() {
        let plan = Self.plan([Self.entry(1, policyMuted: true, heldForLoss: true),
                              Self.entry(2, policyMuted: true, heldForLoss: true)],
                             present: [1: .init(volume: Self.own, muted: true, writable: true),
                                       2: .init(volume: ChannelVolumes(values: [60000, 60000]), muted: true, writable: true)])
        #expect(plan.holds == [1])
        #expect(plan.kept.map(\.step) == [RecoveryStep(held: true), RecoveryStep(unmute: true, leftAlone: true)])
        #expect(plan.putBack == [2])
    }
}
