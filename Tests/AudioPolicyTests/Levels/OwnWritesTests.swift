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
}
