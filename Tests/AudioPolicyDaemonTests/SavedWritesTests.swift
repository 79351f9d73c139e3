import AudioPolicy
@testable import AudioPolicyDaemon
import Foundation
@testable import PulseBackend
@testable import SoundBackend
import Testing

/// ``SavedWrites``: which new-stream volumes are our own saved ducks, and whose level lies under them.
@Suite("Saved writes")
struct SavedWritesTests {
    let own = ChannelVolumes(values: [52428, 45875])
    let key = "sink-input-by-media-role:music"

    @Test("a new stream at a volume we wrote for its key has the written stream's own level")
    func duckedOrigin() {
        var writes = SavedWrites()
        let ducked = own.scaled(by: 0.1)
        writes.wrote(own.scaled(by: 0.5), key: key, own: own)
        writes.wrote(ducked, key: key, own: own)
        #expect(writes.origin(of: ducked, muted: false, key: key, index: 1)?.own == own)
        // One raw unit off, as pipewire-pulse reports it back.
        #expect(writes.origin(of: ChannelVolumes(values: ducked.values.map { $0 + 1 }), muted: false, key: key, index: 1)?.own == own)
        // Another key, or a level we never wrote, is the user's.
        #expect(writes.origin(of: ducked, muted: false, key: "sink-input-by-media-role:event", index: 1) == nil)
        #expect(writes.origin(of: ChannelVolumes(values: [30000, 30000]), muted: false, key: key, index: 1) == nil)
    }

    @Test("a ducked start muted by the user's saved mute: the duck is ours, the mute is not")
    func mutedOrigin() {
        var writes = SavedWrites()
        writes.wrote(own.scaled(by: 0.2), key: key, own: own)
        #expect(writes.origin(of: own.scaled(by: 0.2), muted: true, key: key, index: 1) == .init(own: own, mutedByUs: false))
        writes.wroteMute(true, key: key)
        #expect(writes.origin(of: own.scaled(by: 0.2), muted: true, key: key, index: 1) == .init(own: own, mutedByUs: true))
        #expect(writes.origin(of: own.scaled(by: 0.2), muted: false, key: key, index: 1) == .init(own: own, mutedByUs: false))
    }

    @Test("restores (the own level itself) are not remembered, and the newest write wins")
    func restoresAndOrder() {
        var writes = SavedWrites()
        writes.wrote(own, key: key, own: own)
        #expect(writes.origin(of: own, muted: false, key: key, index: 1) == nil)
        let other = ChannelVolumes(values: [30000, 20000])
        let ducked = own.scaled(by: 0.1)
        writes.wrote(ducked, key: key, own: own)
        writes.wrote(ducked, key: key, own: other)
        #expect(writes.origin(of: ducked, muted: false, key: key, index: 1)?.own == other)
        for step in 0..<(SavedWrites.capacity + 5) {
            writes.wrote(ChannelVolumes(values: [UInt32(1000 + step * 10), 900]), key: key, own: own)
        }
        #expect(writes.origin(of: ducked, muted: false, key: key, index: 1) == nil, "the oldest writes are forgotten")
    }

    @Test("an earlier run's journal: its streams' ducks and fade-outs are ours, a user's level is not")
    func recoveredFromTheJournal() {
        var writes = SavedWrites()
        let entry = JournalEntry(sinkInput: 7, restoreID: key, application: "music", pid: 42, volume: own.values,
                                 channelMap: [1, 2], muted: false, policyMuted: true, duckLevels: [0.1, 0.2])
        writes.recovered([entry].map(\.written))
        #expect(writes.origin(of: own.scaled(by: 0.1), muted: false, key: key, index: 1)?.own.values == own.values)
        #expect(writes.origin(of: own.scaled(by: 0), muted: false, key: key, index: 1)?.own.values == own.values)
        #expect(writes.origin(of: ChannelVolumes(values: [30000, 40000]), muted: false, key: key, index: 1) == nil,
                "not a copy of the own level scaled by one factor: the user's")
    }

    @Test("an earlier run's ducks are the levels its journal names, not others (control: a journal of an older version names none, and only its fade-out is known)")
    func recoveredDuckLevelsAreTheJournals() {
        var writes = SavedWrites()
        let balanced: [UInt32] = [50000, 50000]
        let entry = JournalEntry(sinkInput: 7, restoreID: key, application: "music", pid: 42, volume: balanced,
                                 channelMap: [1, 2], muted: false, duckLevels: [0.25])
        let older = JournalEntry(sinkInput: 8, restoreID: "sink-input-by-media-role:event", application: "bell", pid: 43,
                                 volume: balanced, channelMap: [1, 2], muted: false, policyMuted: true)
        writes.recovered([entry, older].map(\.written))
        let own = ChannelVolumes(values: balanced)
        #expect(writes.origin(of: own.scaled(by: 0.25), muted: false, key: key, index: 1)?.own.values == balanced)
        #expect(writes.origin(of: own.scaled(by: 0.1), muted: false, key: key, index: 1) == nil, "a level that run never ducked to")
        let event = "sink-input-by-media-role:event"
        #expect(writes.origin(of: own.scaled(by: 0.25), muted: false, key: event, index: 1) == nil)
        #expect(writes.origin(of: own.scaled(by: 0), muted: true, key: event, index: 1)?.own.values == balanced)
    }

    @Test("an earlier run's ramp step (any common factor) is ours when the own level is unbalanced, never when balanced")
    func earlierRampSteps() {
        var writes = SavedWrites()
        let unbalanced = JournalEntry(sinkInput: 7, restoreID: key, application: "music", pid: 42,
                                      volume: [24723, 45186], channelMap: [1, 2], muted: false, policyMuted: true,
                                      duckLevels: [0.1])
        let balanced = JournalEntry(sinkInput: 8, restoreID: "sink-input-by-media-role:event", application: "bell", pid: 43,
                                    volume: [50000, 50000], channelMap: [1, 2], muted: false, duckLevels: [0.1])
        writes.recovered([unbalanced, balanced].map(\.written))
        let step = ChannelVolumes(values: [4332, 7918])
        #expect(writes.origin(of: step, muted: false, key: key, index: 1)?.own.values == [24723, 45186])
        #expect(writes.origin(of: ChannelVolumes(values: [4332, 9000]), muted: false, key: key, index: 1) == nil, "not one factor")
        #expect(writes.origin(of: ChannelVolumes(values: [30000, 30000]), muted: false,
                              key: "sink-input-by-media-role:event", index: 1) == nil, "a balanced level may be the user's")
    }

    @Test("a muted start at a level of its own is ours while our mute is the key's newest, the user's once they mute or unmute a stream of it")
    func savedMuteAlone() {
        var writes = SavedWrites()
        let appLevel = ChannelVolumes(values: [40000, 36000])
        #expect(writes.origin(of: appLevel, muted: true, key: key, index: 1) == nil)
        writes.wroteMute(true, key: key)
        #expect(writes.origin(of: appLevel, muted: true, key: key, index: 1) == .init(own: appLevel, mutedByUs: true), "its own level is the app's")
        #expect(writes.origin(of: appLevel, muted: false, key: key, index: 1) == nil, "unmuted: nothing of ours")
        #expect(writes.origin(of: appLevel, muted: true, key: "sink-input-by-media-role:event", index: 1) == nil)
        writes.theyMuted(key: key)
        #expect(writes.origin(of: appLevel, muted: true, key: key, index: 1) == nil)
        writes.wroteMute(true, key: key)
        writes.wroteMute(false, key: key)
        #expect(writes.origin(of: appLevel, muted: true, key: key, index: 1) == nil, "our unmute was saved after it")
    }

    @Test("after a crash, a muted stream at a level nobody wrote is the user's, though an earlier run had muted a stream of its key; at its fade-out's silence, the silence is ours and the mute is ours only above the index the run saw (control: below it, the user muted it while no daemon ran)")
    func recoveredMuteNeedsTheLevel() {
        var writes = SavedWrites()
        let entry = JournalEntry(sinkInput: 7, restoreID: key, application: "music", pid: 42, volume: own.values,
                                 channelMap: [1, 2], muted: false, policyMuted: true, duckLevels: [0.1], savedMuteAbove: 8)
        writes.recovered([entry].map(\.written))
        // A stream the user muted, alive through the daemon's restart (the soak's stream #169).
        #expect(writes.origin(of: ChannelVolumes(values: [40783, 64330]), muted: true, key: key, index: 1) == nil)
        // The earlier run's fade-out end, muted, started after that run: ours.
        let faded = writes.origin(of: own.scaled(by: 0), muted: true, key: key, index: 9)
        #expect(faded?.own.values == own.values && faded?.mutedByUs == true)
        // Control: one the run knew, at the silence, muted by its user meanwhile (CI's churn, stream #9).
        let known = writes.origin(of: own.scaled(by: 0), muted: true, key: key, index: 8)
        #expect(known?.own.values == own.values && known?.mutedByUs == false)
        let ducked = writes.origin(of: own.scaled(by: 0.1), muted: true, key: key, index: 1)
        #expect(ducked?.own.values == own.values && ducked?.mutedByUs == false)
    }

    @Test("after a crash, a muted start above the index the dead run saw last, on a key whose saved mute it left as its own, is ours; at or below it, the user's (control: an entry without the mark claims nothing)",
          arguments: [true, false])
    func recoveredSavedMuteByIndex(marked: Bool) {
        var writes = SavedWrites()
        let entry = JournalEntry(sinkInput: 7, restoreID: key, application: "music", pid: 42, volume: own.values,
                                 channelMap: [1, 2], muted: false, policyMuted: true, savedMuteAbove: marked ? 12 : nil)
        writes.recovered([entry].map(\.written))
        let appLevel = ChannelVolumes(values: [40000, 36000])
        let later = writes.origin(of: appLevel, muted: true, key: key, index: 13)
        #expect(later == (marked ? .init(own: appLevel, mutedByUs: true) : nil), "a stream that started after the run")
        #expect(writes.origin(of: appLevel, muted: true, key: key, index: 12) == nil, "a stream the run knew")
        #expect(writes.origin(of: appLevel, muted: false, key: key, index: 13) == nil, "unmuted: nothing of ours")
        #expect(writes.origin(of: appLevel, muted: true, key: "sink-input-by-media-role:event", index: 13) == nil)
        // Someone muted or unmuted a stream of the key since: its saved mute is theirs.
        writes.theyMuted(key: key)
        #expect(writes.origin(of: appLevel, muted: true, key: key, index: 13) == nil)
    }

    @Test("a duck a run settled at outlives it: a later run takes a start at it for ours; a ramp step, another key, a balanced level do not count")
    func settledDucksAcrossRuns() {
        var first = SavedWrites()
        let ducked = WrittenStream(index: 7, key: key, own: own, muted: false, policyMuted: false,
                                   duckLevels: [0.2, 0.1], savedMute: nil)
        let rememberedFirst = first.rememberSettled(ducked)
        let rememberedAgain = first.rememberSettled(ducked)
        #expect(rememberedFirst)
        #expect(!rememberedAgain, "remembered once")
        // Control: a run that did not read them knows nothing of them.
        #expect(SavedWrites().origin(of: own.scaled(by: 0.1), muted: false, key: key, index: 1) == nil)
        var later = SavedWrites()
        later.rememberSettled(first.settledDucks)
        #expect(later.origin(of: own.scaled(by: 0.1), muted: false, key: key, index: 1)?.own.values == own.values)
        #expect(later.origin(of: own.scaled(by: 0.2), muted: false, key: key, index: 1)?.own.values == own.values)
        #expect(later.origin(of: own.scaled(by: 0.5), muted: false, key: key, index: 1) == nil, "a ramp step is no settled level")
        #expect(later.origin(of: own.scaled(by: 0.1), muted: false, key: "sink-input-by-media-role:event", index: 1) == nil)
        // −20 dB of a balanced 100 % is what an app sets for a volume of 0.1: never remembered.
        let balanced = WrittenStream(index: 8, key: key, own: ChannelVolumes(uniform: ChannelVolumes.norm, channels: 2),
                                     muted: false, policyMuted: false, duckLevels: [0.1], savedMute: nil)
        let rememberedBalanced = first.rememberSettled(balanced)
        #expect(!rememberedBalanced)
        #expect(first.origin(of: balanced.own.scaled(by: 0.1), muted: false, key: key, index: 1) == nil)
    }

    @Test("settled ducks are bounded: 16 per key, 64 keys, the oldest forgotten")
    func settledDucksAreBounded() {
        var writes = SavedWrites()
        func stream(_ key: String, _ left: UInt32) -> WrittenStream {
            WrittenStream(index: 1, key: key, own: ChannelVolumes(values: [left, 20000]), muted: false, policyMuted: false,
                          duckLevels: [0.1], savedMute: nil)
        }
        for step in 0..<(SavedWrites.settledCapacity + 4) { _ = writes.rememberSettled(stream(key, UInt32(40000 + step * 100))) }
        #expect(writes.settledDucks.count == SavedWrites.settledCapacity)
        let oldest = ChannelVolumes(values: [40000, 20000]).scaled(by: 0.1)
        let newest = ChannelVolumes(values: [UInt32(40000 + (SavedWrites.settledCapacity + 3) * 100), 20000]).scaled(by: 0.1)
        #expect(writes.origin(of: oldest, muted: false, key: key, index: 1) == nil)
        #expect(writes.origin(of: newest, muted: false, key: key, index: 1) != nil)
        for other in 0..<SavedWrites.settledKeyCapacity { _ = writes.rememberSettled(stream("app-\(other)", 50000)) }
        #expect(Set(writes.settledDucks.map(\.key)).count == SavedWrites.settledKeyCapacity)
        #expect(writes.origin(of: newest, muted: false, key: key, index: 1) == nil, "the key added to longest ago is forgotten")
    }

    @Test("the settled-duck file: read back as written; none when missing; nil when not ours")
    func settledDuckFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("settled-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/" + SettledDuckFile.name
        #expect(SettledDuckFile.load(path) == [])
        let ducks = [SettledDuck(key: key, volume: own.scaled(by: 0.1), own: own)]
        try SettledDuckFile.save(ducks, to: path)
        #expect(SettledDuckFile.load(path)?.map(\.volume.values) == ducks.map(\.volume.values))
        #expect(SettledDuckFile.load(path)?.map(\.own.values) == [own.values])
        try Data(#"{"ducks":[],"version":2}"#.utf8).write(to: URL(fileURLWithPath: path))
        #expect(SettledDuckFile.load(path) == nil, "another version")
        try Data("{\"ducks\":[".utf8).write(to: URL(fileURLWithPath: path))
        #expect(SettledDuckFile.load(path) == nil, "cut short")
    }
}
