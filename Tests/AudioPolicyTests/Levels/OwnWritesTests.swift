import AudioPolicy
import Testing

/// ``OwnWrites``: telling the server's echo of our writes from someone else's change, field by field.
@Suite("Own writes")
struct OwnWritesTests {
    func stream(_ volume: [UInt32], muted: Bool) -> (volume: ChannelVolumes, muted: Bool) {
        (ChannelVolumes(values: volume), muted)
    }

    @Test("our fade-out's mute, seen in the same snapshot as the user's new volume: the volume is theirs, the mute ours")
    func userVolumeWithOurMute() {
        var writes = OwnWrites()
        writes.recordVolume(ChannelVolumes(values: [0, 0]), at: 1_000)
        writes.recordMute(true, at: 1_000)
        let (change, theirVolume, theirMute) = writes.classify(
            previous: stream([40000, 40000], muted: false), current: stream([50000, 60000], muted: true), now: 2_000)
        #expect(change == .theirs && theirVolume)
        #expect(!theirMute, "the mute is the echo of ours, not the user's")
    }

    @Test("a mute nobody here sent is theirs; the volume, unchanged since the last report, is not")
    func theirMute() {
        var writes = OwnWrites()
        writes.recordVolume(ChannelVolumes(values: [0, 0]), at: 1_000)
        let (change, theirVolume, theirMute) = writes.classify(
            previous: stream([0, 0], muted: false), current: stream([0, 0], muted: true), now: 2_000)
        #expect(change == .theirs && theirMute && !theirVolume, "only the mute changed, and not by us")
        let (both, _, _) = writes.classify(
            previous: stream([40000, 40000], muted: true), current: stream([0, 0], muted: true), now: 2_000)
        #expect(both == .ours)
    }

    @Test("our mute and unmute, answered before a fetch that shows a mute: that mute is theirs; fetched before the answers, it may be the first's echo")
    func muteAfterOurAnsweredMuteAndUnmute() {
        for answeredFirst in [true, false] {
            var writes = OwnWrites()
            writes.recordMute(true, at: 1_000, order: 1)
            writes.recordMute(false, at: 1_000, order: 2)
            writes.answered(1, at: 3)
            writes.answered(2, at: 4)
            // No change shown meanwhile: the snapshots all showed the stream unmuted.
            let (change, _, theirMute) = writes.classify(
                previous: stream([40000, 40000], muted: false), current: stream([40000, 40000], muted: true),
                now: 2_000, fetched: answeredFirst ? 5 : 3)
            #expect(change == (answeredFirst ? .theirs : .ours), "fetched after the answers: \(answeredFirst)")
            #expect(theirMute == answeredFirst)
        }
    }

    @Test("a snapshot the same as the last settles the writes answered before it; fetched before their answers, it does not")
    func unchangedSnapshotSettlesAnsweredWrites() {
        for fetchedAfter in [true, false] {
            var writes = OwnWrites()
            writes.recordVolume(ChannelVolumes(values: [0, 0]), at: 1_000, order: 1)
            writes.recordMute(true, at: 1_000, order: 2)
            writes.answered(1, at: 3)
            writes.answered(2, at: 4)
            writes.settle(fetched: fetchedAfter ? 5 : 4)
            #expect(writes.isEmpty == fetchedAfter, "fetched after the answers: \(fetchedAfter)")
        }
    }

    @Test("a user's level seen while a ramp step of ours is not yet answered: that step may still land over it; answered before the fetch, it cannot")
    func usersLevelWithAStepInFlight() {
        for answeredBefore in [true, false] {
            var writes = OwnWrites()
            writes.recordVolume(ChannelVolumes(values: [4000, 4000]), at: 1_000, order: 1)
            if answeredBefore { writes.answered(1, at: 2) }
            let (change, theirVolume, _) = writes.classify(
                previous: stream([0, 0], muted: false), current: stream([40000, 45000], muted: false),
                now: 2_000, fetched: 3)
            #expect(change == .theirs && theirVolume)
            #expect(writes.volumeInFlight(fetched: 3) == !answeredBefore, "answered before the fetch: \(answeredBefore)")
        }
    }

    @Test("a user's mute fetched before our mute was sent is theirs, though our mute would explain it; fetched after it was sent, it may be its echo (control)")
    func usersMuteFetchedBeforeOurMute() {
        for sentBeforeTheFetch in [false, true] {
            var writes = OwnWrites()
            // Fetch number 3 (the user's mute) is asked for before (order 4) or after (order 2) our mute.
            writes.recordMute(true, at: 1_000, order: sentBeforeTheFetch ? 2 : 4)
            let (change, _, theirMute) = writes.classify(
                previous: stream([40000, 40000], muted: false), current: stream([40000, 40000], muted: true),
                now: 2_000, fetched: 3)
            #expect(change == (sentBeforeTheFetch ? .ours : .theirs), "sent before the fetch: \(sentBeforeTheFetch)")
            #expect(theirMute == !sentBeforeTheFetch)
            // Not sent before the fetch, our mute is still to echo: the next snapshot, muted, is no change.
            #expect(writes.isEmpty == sentBeforeTheFetch)
        }
    }
}
