import AudioPolicy
import Testing

/// ``RecoveryStep/of(_:heldForLoss:volume:muted:writable:)``: what recovery does to a stream an earlier
/// run left changed, the rule the daemon and the rehearsal share.
@Suite("Recovery step: what recovery does to a stream still there")
struct RecoveryStepTests {
    /// A journal entry: own level 80 % / 60 % (unbalanced, so a scaled copy is told from a user's level).
    static func written(policyMuted: Bool) -> WrittenStream {
        WrittenStream(index: 7, key: "sink-input-by-media-role:music", own: ChannelVolumes(values: [52429, 39322]),
                      muted: policyMuted, policyMuted: policyMuted, duckLevels: [], savedMute: nil)
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var what: String
        var policyMuted: Bool
        var heldForLoss: Bool
        var volume: [UInt32]
        var muted: Bool
        var writable = true
        var expected: RecoveryStep
        var testDescription: String { what }
    }

    @Test("each journaled state, and what the server shows now", arguments: [
        Row(what: "held, untouched at its fade's end: held, its level back under the mute",
            policyMuted: true, heldForLoss: true, volume: [0, 0], muted: true,
            expected: RecoveryStep(held: true, restore: ChannelVolumes(values: [52429, 39322]))),
        Row(what: "held, at its own level: held", policyMuted: true, heldForLoss: true, volume: [52429, 39322],
            muted: true, expected: RecoveryStep(held: true)),
        Row(what: "held, its level set since (the user acted while no daemon ran): unmuted, left there",
            policyMuted: true, heldForLoss: true, volume: [63613, 61155], muted: true,
            expected: RecoveryStep(unmute: true, leftAlone: true)),
        Row(what: "held, unmuted since: nothing of the hold left", policyMuted: true, heldForLoss: true,
            volume: [52429, 39322], muted: false, expected: RecoveryStep()),
        Row(what: "held, level unknown (not writable): held", policyMuted: true, heldForLoss: true,
            volume: [63613, 61155], muted: true, writable: false, expected: RecoveryStep(held: true)),
        Row(what: "muted by the policy: unmuted, its level back", policyMuted: true, heldForLoss: false,
            volume: [0, 0], muted: true,
            expected: RecoveryStep(unmute: true, restore: ChannelVolumes(values: [52429, 39322]))),
        Row(what: "muted by the policy, level set since: unmuted, left there", policyMuted: true,
            heldForLoss: false, volume: [63613, 61155], muted: true, expected: RecoveryStep(unmute: true, leftAlone: true)),
        Row(what: "ducked (a scaled copy): its level back", policyMuted: false, heldForLoss: false,
            volume: [26214, 19661], muted: false,
            expected: RecoveryStep(restore: ChannelVolumes(values: [52429, 39322]))),
        Row(what: "its user's mute: never unmuted", policyMuted: false, heldForLoss: false,
            volume: [52429, 39322], muted: true, expected: RecoveryStep()),
    ])
    func step(_ row: Row) {
        let step = RecoveryStep.of(Self.written(policyMuted: row.policyMuted), heldForLoss: row.heldForLoss,
                                   volume: ChannelVolumes(values: row.volume), muted: row.muted,
                                   writable: row.writable)
        #expect(step == row.expected)
    }
}
