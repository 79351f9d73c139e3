import Foundation
import AudioPolicy
import Testing

@Suite struct AudibilityTests {
    /// 10 peaks a second, as the meter delivers them.
    let period: UInt64 = 100_000
    let loud: Float = 0.3          // −10 dBFS
    let between: Float = 0.002     // −54 dBFS: between the thresholds
    let quiet: Float = 0.0001      // −80 dBFS

    /// Feeds `peaks` one period apart from `start` (first at `start + period`); returns the
    /// transitions with the time they happened.
    func feed(_ audibility: inout AudibilityDetector, _ peaks: [Float], from start: UInt64)
        -> [(UInt64, AudibilityDetector.Transition)] {
        var result: [(UInt64, AudibilityDetector.Transition)] = []
        for (n, peak) in peaks.enumerated() {
            let time = start + UInt64(n + 1) * period
            if let change = audibility.add(peak: peak, at: time) { result.append((time, change)) }
        }
        return result
    }

    @Test func startsAudibleAndTurnsSilentOnlyAfterTheHangover() {
        var audibility = AudibilityDetector(startedAt: 0)
        #expect(audibility.isAudible)
        #expect(audibility.silentAt == 400_000)
        // Digital silence from the start: quiet peaks at 100, 200, 300 ms change nothing…
        #expect(feed(&audibility, [0, 0, 0], from: 0).isEmpty)
        #expect(audibility.isAudible)
        // …the one at 400 ms (a full hangover of quiet) does.
        #expect(audibility.add(peak: 0, at: 400_000) == .becameSilent)
        #expect(!audibility.isAudible)
        #expect(audibility.silentAt == nil)
        // And it stays silent without saying so again.
        #expect(feed(&audibility, Array(repeating: 0, count: 20), from: 400_000).isEmpty)
    }

    @Test func oneLoudPeakMakesItAudibleAtOnce() {
        var audibility = AudibilityDetector(startedAt: 0)
        _ = feed(&audibility, [0, 0, 0, 0], from: 0)
        #expect(!audibility.isAudible)
        #expect(audibility.add(peak: loud, at: 500_000) == .becameAudible)
        #expect(audibility.isAudible)
        #expect(audibility.add(peak: loud, at: 600_000) == nil)
    }

    @Test func gapsShorterThanTheHangoverAreNotSilence() {
        var audibility = AudibilityDetector(startedAt: 0)
        // Speech: 300 ms of sound, 300 ms pauses, for 6 s.
        let word: [Float] = [loud, loud, loud, quiet, quiet, quiet]
        let changes = feed(&audibility, Array(Array(repeating: word, count: 10).joined()), from: 0)
        #expect(changes.isEmpty)
        #expect(audibility.isAudible)
    }

    @Test func silenceIsTimedFromTheLastSound() {
        var audibility = AudibilityDetector(startedAt: 0)
        let changes = feed(&audibility, [loud, loud] + Array(repeating: quiet, count: 10), from: 0)
        // Last sound at 200 ms: silent at the first quiet peak 400 ms later.
        #expect(changes.map(\.0) == [600_000])
        #expect(changes.map(\.1) == [.becameSilent])
    }

    @Test func peaksBetweenTheThresholdsKeepTheStateTheyFind() {
        // Audible stays audible: a quiet passage around −54 dBFS is still sound.
        var playing = AudibilityDetector(startedAt: 0)
        #expect(feed(&playing, Array(repeating: between, count: 30), from: 0).isEmpty)
        #expect(playing.isAudible)
        // Silent stays silent: the same level does not wake a silent stream.
        var silent = AudibilityDetector(startedAt: 0)
        _ = feed(&silent, Array(repeating: quiet, count: 5), from: 0)
        #expect(!silent.isAudible)
        #expect(feed(&silent, Array(repeating: between, count: 30), from: 500_000).isEmpty)
        #expect(!silent.isAudible)
    }

    @Test func aToneAndDigitalSilenceComeOutDifferently() {
        var tone = AudibilityDetector(startedAt: 0)
        var silence = AudibilityDetector(startedAt: 0)
        _ = feed(&tone, Array(repeating: 0.4, count: 30), from: 0)
        _ = feed(&silence, Array(repeating: 0, count: 30), from: 0)
        #expect(tone.isAudible)
        #expect(!silence.isAudible)
    }

    @Test func thresholdsAreTheDocumentedOnes() {
        let thresholds = AudibilityThresholds()
        // −50 dBFS and −60 dBFS, 400 ms.
        #expect(abs(thresholds.heardAbove.decibels + 50) < 0.01)
        #expect(abs(thresholds.silentBelow.decibels + 60) < 0.01)
        #expect(thresholds.silenceAfter == 400)
        #expect(Policy.embeddedDefault.audibility == thresholds)
        // Exactly at the audible threshold is not above it; exactly at the silent one is not below.
        var audibility = AudibilityDetector(startedAt: 0)
        _ = feed(&audibility, Array(repeating: 0, count: 5), from: 0)
        #expect(audibility.add(peak: Float(thresholds.heardAbove.linear), at: 600_000) == nil)
        var playing = AudibilityDetector(startedAt: 0)
        #expect(feed(&playing, Array(repeating: Float(thresholds.silentBelow.linear), count: 10), from: 0).isEmpty)
    }

    /// A policy's `[audibility]` moves both thresholds and the hangover: the peak between today's
    /// thresholds (−54 dBFS) is silence under thresholds of −40/−45 dB, and sound under −70/−80 dB; a
    /// hangover of 800 ms calls a silence at 800 ms, not 400 (the control is the default above).
    @Test func thresholdsFromThePolicyDecide() {
        let strict = AudibilityThresholds(heardAbove: Level(decibels: -40), silentBelow: Level(decibels: -45),
                                          silenceAfter: 800)
        var underStrict = AudibilityDetector(startedAt: 0, thresholds: strict)
        let turned = feed(&underStrict, Array(repeating: between, count: 10), from: 0)
        #expect(turned.map(\.0) == [800_000] && turned.map(\.1) == [.becameSilent])
        var underDefault = AudibilityDetector(startedAt: 0)
        #expect(feed(&underDefault, Array(repeating: between, count: 10), from: 0).isEmpty)
        let lenient = AudibilityThresholds(heardAbove: Level(decibels: -70), silentBelow: Level(decibels: -80))
        var waking = AudibilityDetector(startedAt: 0)
        _ = feed(&waking, [0, 0, 0, 0, 0], from: 0)
        #expect(!waking.isAudible)
        #expect(waking.add(peak: between, at: 600_000) == nil, "−54 dBFS wakes nothing under the default")
        waking.thresholds = lenient
        #expect(waking.add(peak: between, at: 700_000) == .becameAudible, "a reload's thresholds apply at once")
    }

    @Test func nanIsNoEvidenceAndTimeGoingBackIsNoSilence() {
        var audibility = AudibilityDetector(startedAt: 1_000_000)
        #expect(audibility.add(peak: .nan, at: 2_000_000) == nil)
        #expect(audibility.isAudible)
        // A peak stamped before the start cannot have lasted a hangover.
        #expect(audibility.add(peak: 0, at: 500_000) == nil)
        #expect(audibility.isAudible)
        #expect(audibility.add(peak: 0, at: 1_400_000) == .becameSilent)
    }
}
