import Testing
@testable import AudioPolicy

/// `[audibility]`: the thresholds every meter judges by, read, laid over by drop-ins and checked
/// (``merged(_:)`` and ``errors(_:)`` lay drop-ins over the default, as in PolicyDropInTests).
@Suite("Policy [audibility]")
struct PolicyAudibilityTests {
    @Test func defaultsAreTodaysValues() throws {
        let policy = try merged([])
        #expect(policy.audibility == AudibilityThresholds())
        #expect(abs(policy.audibility.heardAbove.decibels + 50) < 1e-9)
        #expect(abs(policy.audibility.silentBelow.decibels + 60) < 1e-9)
        #expect(policy.audibility.silenceAfter == 400)
        // A base policy of its own without the table has them too.
        let bare = try PolicyLoader.load(text: "[class.primary]\n", file: "p.toml")
        #expect(bare.audibility == AudibilityThresholds())
    }

    @Test func aDropInChangesWhatItNamesKeyByKey() throws {
        let policy = try merged([
            "[audibility]\nheard-above = \"-40 dB\"\nsilence-after = \"0.8s\"\n",
            "[audibility]\nsilent-below = 0.001\n",
        ])
        #expect(abs(policy.audibility.heardAbove.decibels + 40) < 1e-9)
        #expect(abs(policy.audibility.silentBelow.decibels + 60) < 1e-9)
        #expect(policy.audibility.silenceAfter == 800)
        let quiet = try merged(["[audibility]\nheard-above = \"-80 dB\"\nsilent-below = \"-90 dB\"\n"])
        #expect(abs(quiet.audibility.silentBelow.decibels + 90) < 1e-9)
    }

    @Test func badValuesAreErrorsWhereTheyAre() {
        #expect(errors(["[audibility]\nheard-above = \"-120 dB\"\n"])
            == ["d1.toml:2:15: `heard-above` must be between -100 dB and 0 dB, got \"-120 dB\""])
        #expect(errors(["[audibility]\nsilence-after = 0\n"])
            == ["d1.toml:2:17: `silence-after` must be above 0 and at most 2000 ms, got 0 ms"])
        #expect(errors(["[audibility]\nsilence-after = \"3 s\"\n"])
            == ["d1.toml:2:17: `silence-after` must be above 0 and at most 2000 ms, got 3000 ms"])
        #expect(errors(["[audibility]\nheard = \"-40 dB\"\n"]).first?.hasPrefix(
            "d1.toml:2:1: unknown key `heard` in [audibility]") == true)
        #expect(errors(["audibility = 3\n"]).first?.hasPrefix("d1.toml:1:") == true)
    }

    /// Silence above sound is refused, blamed on the threshold written last (here the second drop-in's).
    @Test func silenceMustNotBeAboveSound() {
        #expect(errors(["[audibility]\nheard-above = \"-70 dB\"\n", "[audibility]\n\nsilent-below = \"-65 dB\"\n"])
            == ["d2.toml:3:16: [audibility] `silent-below` (-65 dB) must not be above `heard-above` (-70 dB): a peak between them keeps a stream as it was"])
        #expect(errors(["[audibility]\nheard-above = \"-60 dB\"\nsilent-below = \"-60 dB\"\n"]).isEmpty,
                "equal thresholds are allowed: no peak lies between them")
    }
}
