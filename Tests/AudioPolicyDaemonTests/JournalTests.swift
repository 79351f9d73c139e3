import AudioPolicy
import AudioPolicyDaemon
import Foundation
import PulseBackend
import SoundBackend
import Testing

@Suite("Journal: format, atomic file, corrupt files")
struct JournalTests {
    static let music = JournalEntry(
        sinkInput: 7, restoreID: "sink-input-by-media-role:music", application: "Rhythmbox", pid: 4242,
        volume: [55705, 45875], channelMap: [1, 2], muted: false, policyMuted: true, pausedPlayers: ["org.mpris.MediaPlayer2.rhythmbox"])
    static let beep = JournalEntry(
        sinkInput: 3, restoreID: nil, application: nil, pid: nil, volume: [65536], channelMap: [], muted: true)

    // MARK: - Format

    @Test("a record keeps the journal's order and decodes back; equal journals are equal bytes")
    func encodesInOrderAndDecodesBack() throws {
        let file = JournalFile(entries: [Self.music, Self.beep])
        #expect(file.entries.map(\.sinkInput) == [7, 3])
        let data = file.encoded()
        #expect(try JournalFile.decode(data) == file)
        #expect(JournalFile(entries: [Self.music, Self.beep]).encoded() == data)
        // The order is the recovery's (``JournalOrder``): another order is another journal.
        #expect(JournalFile(entries: [Self.beep, Self.music]).encoded() != data)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.hasPrefix(#"{"entries":[{"application":"Rhythmbox""#), "\(text)")
        #expect(text.contains(#""version":1"#) && text.hasSuffix("}\n"))
    }

    @Test("every cut of a journal is refused, never half read", arguments: [1, 2, 10, 40, 100])
    func truncatedIsRefused(_ keep: Int) throws {
        let data = JournalFile(entries: [Self.music]).encoded()
        // Anything short of the closing brace (the newline after it is optional).
        let cut = data.prefix(max(0, data.count * keep / 100 - 2))
        #expect(throws: JournalFile.Unreadable.self) { try JournalFile.decode(Data(cut)) }
    }

    @Test func refusesOtherVersionsTypesAndMismatchedChannels() {
        func reason(_ text: String) -> String? {
            do {
                _ = try JournalFile.decode(Data(text.utf8))
                return nil
            } catch {
                return error.description
            }
        }
        #expect(reason(#"{"version":2,"entries":[]}"#)?.contains("version 2") == true)
        #expect(reason(#"{"entries":[]}"#)?.contains("missing \"version\"") == true)
        #expect(reason(#"{"version":1,"entries":[{"sinkInput":"x"}]}"#)?.contains("entries[0].sinkInput") == true)
        #expect(reason(#"{"version":1,"entries":[{"sinkInput":1,"volume":[1,2],"channelMap":[1],"muted":false,"#
            + #""policyMuted":false,"pausedPlayers":[]}]}"#)?.contains("2 volumes but 1 channel positions") == true)
        #expect(reason("") != nil)
        #expect(reason(#"{"version":1,"entries":[]}"#) == nil)
        // Nested past the decoder's limit and cut off there, Foundation's decoder traps: refused first.
        #expect(reason(#"{"version":1,"entries":"# + String(repeating: "[", count: 512))?.contains("nested more than 64") == true)
    }

    // MARK: - What recovery restores

    @Test func scaledDownCopiesAreOursAnythingElseIsSomeoneElses() {
        let own = Self.music.ownVolume
        #expect(Self.music.isScaledDown(own))
        #expect(Self.music.isScaledDown(own.scaled(by: 0.1)))
        #expect(Self.music.isScaledDown(own.scaled(by: 0.5)))
        #expect(Self.music.isScaledDown(own.scaled(by: 0)))
        // One raw unit off on a channel (pipewire-pulse's float round trip).
        var offByOne = own.scaled(by: 0.3)
        offByOne.values[1] += 1
        #expect(Self.music.isScaledDown(offByOne))
        // The user set a volume of their own meanwhile: louder, or another balance.
        #expect(!Self.music.isScaledDown(ChannelVolumes(values: [60000, 60000])))
        #expect(!Self.music.isScaledDown(ChannelVolumes(values: [30000, 30000])))
        #expect(!Self.music.isScaledDown(ChannelVolumes(values: [30000])))
    }

    @Test func savedMuteIsTheUsersNeverThePolicys() {
        #expect(Self.music.written.savedEntryMute == false)
        #expect(Self.beep.written.savedEntryMute == true)
    }

    /// A stream the policy muted is repaired with its key's mute as its users left it, which the entry
    /// carries through the file; an older journal, without it, repairs unmuted as before.
    @Test("the key's mute as its users left it survives the file and is what a policy-muted stream's repair writes")
    func keyUsersMuteSurvivesTheFile() throws {
        var muted = Self.music
        muted.keyUsersMute = true
        let file = JournalFile(entries: [muted])
        let back = try JournalFile.decode(file.encoded())
        #expect(back.entries.first?.keyUsersMute == true)
        #expect(back.entries.first?.written.savedEntryMute == true)
        // Control: without it (an older journal's entry), the policy's mute is never saved.
        let older = try JournalFile.decode(JournalFile(entries: [Self.music]).encoded())
        #expect(older.entries.first?.keyUsersMute == nil)
        #expect(older.entries.first?.written.savedEntryMute == false)
        #expect(!String(decoding: JournalFile(entries: [Self.music]).encoded(), as: UTF8.self).contains("keyUsersMute"))
    }

    /// A mark's conditions go through the file: one kept for an unmute the server had not answered counts
    /// only for a stream gone whose key is saved muted (``SavedMuteMark/ifUnmuteLost``), and one our repair
    /// over our mute left on only for starts at a level of ours (``SavedMuteMark/atOurLevelsOnly``).
    @Test("a saved-mute mark's condition survives the file; a plain mark stays plain and writes none",
          arguments: ["savedMuteIfUnmuteLost", "savedMuteAtOurLevelsOnly"])
    func markConditionSurvivesTheFile(field: String) throws {
        var kept = Self.music
        kept.policyMuted = true
        kept.savedMuteAbove = 7
        kept.savedMuteServer = 42
        let unmuteLost = field == "savedMuteIfUnmuteLost"
        kept.savedMuteIfUnmuteLost = unmuteLost ? true : nil
        kept.savedMuteAtOurLevelsOnly = unmuteLost ? nil : true
        let back = try JournalFile.decode(JournalFile(entries: [kept]).encoded())
        #expect(back.entries.first?.written.savedMute
            == SavedMuteMark(above: 7, server: 42, ifUnmuteLost: unmuteLost, atOurLevelsOnly: !unmuteLost))
        // Control: a plain mark (an older journal's, too) is not conditional.
        kept.savedMuteIfUnmuteLost = nil
        kept.savedMuteAtOurLevelsOnly = nil
        let plain = try JournalFile.decode(JournalFile(entries: [kept]).encoded())
        #expect(plain.entries.first?.written.savedMute == SavedMuteMark(above: 7, server: 42))
        #expect(!String(decoding: JournalFile(entries: [kept]).encoded(), as: UTF8.self).contains(field))
    }

    /// Whether the server saves a stream's mute with its level goes through the file, so that the next
    /// run knows what recovery's write of its level saves (``WrittenStream/muteSaved``).
    @Test("a stream whose mute the server saves says so through the file; an older journal's does not")
    func muteSavedSurvivesTheFile() throws {
        var ducked = Self.music
        ducked.muteSaved = true
        let back = try JournalFile.decode(JournalFile(entries: [ducked]).encoded())
        #expect(back.entries.first?.written.muteSaved == true)
        // Control: an entry without it (an older journal's) is a stream whose mute is not saved.
        ducked.muteSaved = nil
        let older = try JournalFile.decode(JournalFile(entries: [ducked]).encoded())
        #expect(older.entries.first?.written.muteSaved == false)
        #expect(!String(decoding: JournalFile(entries: [ducked]).encoded(), as: UTF8.self).contains("muteSaved"))
    }

    // MARK: - The file

    @Test func appendsRecordsLoadsTheLastAndIsRemovedAtACleanStopWhenEmpty() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = JournalStore(path: folder.appendingPathComponent("state/audio-policyd/journal.json").path)
        #expect(store.load() == .empty)
        try store.save([Self.music, Self.beep])
        #expect(store.load() == .entries([Self.music, Self.beep]))
        let attributes = try FileManager.default.attributesOfItem(atPath: store.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        try store.save([Self.beep])
        #expect(store.load() == .entries([Self.beep]))
        // One record a line, the last one is the journal.
        let lines = try Self.lines(store.path)
        #expect(lines == [JournalFile(entries: [Self.music, Self.beep]).encoded(), JournalFile(entries: [Self.beep]).encoded()])
        // Emptied while running: an empty record, the file stays (nothing created or removed on the
        // way to the next duck); a clean stop removes it.
        try store.save([])
        #expect(store.load() == .empty)
        #expect(try Self.lines(store.path).count == 3)
        store.finish()
        #expect(!FileManager.default.fileExists(atPath: store.path))
        try store.save([])
        #expect(!FileManager.default.fileExists(atPath: store.path))
        // After the file went, the next change starts a new one.
        try store.save([Self.music])
        #expect(try Self.lines(store.path) == [JournalFile(entries: [Self.music]).encoded()])
        store.flush()
    }

    @Test func anEntryEncodedAheadIsUsedOnlyWhileItIsTheSame() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = JournalStore(path: folder.appendingPathComponent("journal.json").path)
        var earlier = Self.music
        earlier.volume = [1000, 1000]
        store.prepare(earlier)
        try store.save([Self.music, Self.beep])
        #expect(try Self.lines(store.path) == [JournalFile(entries: [Self.music, Self.beep]).encoded()])
        store.prepare(Self.music)
        try store.save([Self.music])
        #expect(store.load() == .entries([Self.music]))
        store.forget(Self.music.sinkInput)
        try store.save([Self.beep, Self.music])
        #expect(store.load() == .entries([Self.beep, Self.music]))
    }

    @Test func aLastRecordCutShortLeavesTheOneBefore() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("journal.json").path
        let first = JournalFile(entries: [Self.music]).encoded()
        let second = JournalFile(entries: [Self.music, Self.beep]).encoded()
        try (first + second.prefix(second.count / 2)).write(to: URL(fileURLWithPath: path))
        #expect(JournalStore(path: path).load() == .cutShort([Self.music]))
        // Cut just before its newline, the last record is whole.
        try (first + second.dropLast()).write(to: URL(fileURLWithPath: path))
        #expect(JournalStore(path: path).load() == .entries([Self.music, Self.beep]))
    }

    @Test func anEarlierRunsFileIsReplacedNotAppendedTo() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("journal.json").path
        let earlier = JournalFile(entries: [Self.music]).encoded()
        try (earlier + earlier.prefix(20)).write(to: URL(fileURLWithPath: path))
        let store = JournalStore(path: path)
        try store.save([Self.beep])
        #expect(try Self.lines(path) == [JournalFile(entries: [Self.beep]).encoded()])
        #expect(!FileManager.default.fileExists(atPath: path + ".tmp"))
        try store.save([Self.music])
        #expect(store.load() == .entries([Self.music]))
    }

    @Test func aLongLogIsCompactedToItsLastRecord() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = JournalStore(path: folder.appendingPathComponent("journal.json").path)
        let record = JournalFile(entries: [Self.music]).encoded()
        let fits = JournalStore.compactionSize / record.count
        for _ in 0..<fits { try store.save([Self.music]) }
        #expect(try Self.lines(store.path).count == fits)
        #expect(!store.compactionDue)
        try store.compactIfDue()
        #expect(try Self.lines(store.path).count == fits, "compacted before it was due")
        // Past the size, the change is appended at once (a change never waits for a compaction)...
        try store.save([Self.beep])
        #expect(try Self.lines(store.path).count == fits + 1)
        #expect(store.compactionDue)
        #expect(store.load() == .entries([Self.beep]))
        // ...and the log becomes its last record when the daemon says the moment is right.
        try store.compactIfDue()
        #expect(!store.compactionDue)
        #expect(try Self.lines(store.path) == [JournalFile(entries: [Self.beep]).encoded()])
        #expect(!FileManager.default.fileExists(atPath: store.path + ".tmp"))
        try store.save([Self.music])
        #expect(try Self.lines(store.path).count == 2)
        #expect(store.load() == .entries([Self.music]))
    }

    @Test func aLogNeverCompactedIsReplacedAtItsLimit() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = JournalStore(path: folder.appendingPathComponent("journal.json").path)
        let record = JournalFile(entries: [Self.music]).encoded()
        // Never compacted: the log grows past its due size up to its limit, then starts over.
        var longest = 0
        for _ in 0..<(5 * JournalStore.compactionSize / record.count) {
            try store.save([Self.music])
            let lines = try Self.lines(store.path).count
            if lines < longest { break }
            longest = lines
        }
        #expect(try Self.lines(store.path).count == 1, "never started over")
        #expect(longest * record.count <= 4 * JournalStore.compactionSize, "outgrew its limit")
        #expect(longest * record.count > 4 * JournalStore.compactionSize - record.count)
        #expect(store.load() == .entries([Self.music]))
    }

    @Test("a corrupt journal is set aside with its bytes, once, and the next load is empty",
          arguments: ["cut", "garbage", "garbage after a good record"])
    func corruptIsSetAside(_ kind: String) throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = JournalStore(path: folder.appendingPathComponent("journal.json").path)
        let whole = JournalFile(entries: [Self.music]).encoded()
        let bytes = switch kind {
        case "cut": whole.prefix(whole.count - 5)
        case "garbage": Data([0, 159, 146, 150])
        default: whole + Data("not a record\n".utf8)
        }
        try bytes.write(to: URL(fileURLWithPath: store.path))
        let when = Date(timeIntervalSince1970: 1_800_000_000)
        guard case let .corrupt(reason, aside) = store.load(now: when) else {
            Issue.record("not reported corrupt: \(store.load())")
            return
        }
        #expect(!reason.isEmpty)
        #expect(aside == store.path + ".corrupt-20270115T080000Z")
        #expect(try Data(contentsOf: URL(fileURLWithPath: try #require(aside))) == bytes)
        #expect(store.load() == .empty)
        // A second bad journal at the same second gets a name of its own.
        try bytes.write(to: URL(fileURLWithPath: store.path))
        guard case let .corrupt(_, second) = store.load(now: when) else { return }
        #expect(second == store.path + ".corrupt-20270115T080000Z-2")
    }

    // MARK: - Log on tmpfs, durable copy

    @Test func theDurableCopyFollowsTheLogAndIsReadWhenTheLogIsGone() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = folder.appendingPathComponent("runtime/audio-policyd/journal.json").path
        let copy = folder.appendingPathComponent("state/audio-policyd/journal.json").path
        let store = JournalStore(path: log, durableCopy: copy)
        try store.save([Self.music])
        try store.save([Self.music, Self.beep])
        store.flush()
        // The log has every record; the copy only the newest, whole.
        #expect(try Self.lines(log).count == 2)
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == JournalFile(entries: [Self.music, Self.beep]).encoded())
        #expect(!FileManager.default.fileExists(atPath: copy + ".tmp"))
        #expect(store.readPath == log)
        #expect(store.load() == .entries([Self.music, Self.beep]))

        // A new session (the runtime folder is gone): the copy is the journal.
        try FileManager.default.removeItem(atPath: log)
        let next = JournalStore(path: log, durableCopy: copy)
        #expect(next.readPath == copy)
        #expect(next.load() == .entries([Self.music, Self.beep]))
        // Restored: both go.
        try next.save([])
        next.finish()
        #expect(!FileManager.default.fileExists(atPath: log))
        #expect(!FileManager.default.fileExists(atPath: copy))
    }

    @Test func aCleanStopWithNothingChangedLeavesNeitherFile() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = folder.appendingPathComponent("journal.json").path
        let copy = folder.appendingPathComponent("durable/journal.json").path
        let store = JournalStore(path: log, durableCopy: copy)
        try store.save([Self.music])
        try store.save([])
        store.flush()
        // While running, the emptied journal keeps its log, with an empty record, and so does the copy.
        #expect(store.load() == .empty)
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy)) == JournalFile(entries: []).encoded())
        store.finish()
        #expect(!FileManager.default.fileExists(atPath: log))
        #expect(!FileManager.default.fileExists(atPath: copy))
    }

    @Test func aCorruptDurableCopyIsSetAsideWhereItLies() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let log = folder.appendingPathComponent("runtime/journal.json").path
        let copy = folder.appendingPathComponent("journal.json").path
        try Data("garbage\n".utf8).write(to: URL(fileURLWithPath: copy))
        let store = JournalStore(path: log, durableCopy: copy)
        guard case let .corrupt(_, aside) = store.load() else {
            Issue.record("not reported corrupt")
            return
        }
        #expect(aside?.hasPrefix(copy + ".corrupt-") == true)
        #expect(!FileManager.default.fileExists(atPath: copy))
        #expect(store.load() == .empty)
    }

    @Test func aDurableCopyThatCannotBeWrittenIsSignalledAndSoIsItsRecovery() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Its folder would be inside a regular file: nothing can create it, not even root.
        let blocker = folder.appendingPathComponent("not-a-folder")
        try Data().write(to: blocker)
        let store = JournalStore(path: folder.appendingPathComponent("journal.json").path,
                                 durableCopy: blocker.appendingPathComponent("journal.json").path)
        #expect(store.load() == .empty, "a copy that cannot exist is no journal, not a corrupt one")
        try store.save([Self.music])
        // The failure wakes whoever watches the signal (the daemon's loop), without a further change.
        let signal = try #require(store.durableCopySignal)
        #expect(Self.becomesReadable(signal, withinMilliseconds: 5000))
        let failure = try #require(store.durableCopyFailure())
        #expect(failure.contains("not-a-folder/journal.json.tmp"), "\(failure)")
        #expect(!Self.becomesReadable(signal, withinMilliseconds: 0), "asking quiets the signal")
        #expect(store.durableCopyFailure() == failure, "the state stays until a copy is written")
        // The log has the record all the same.
        #expect(store.load() == .entries([Self.music]))

        // The way is clear again: the next copy is written, and that is signalled too.
        try FileManager.default.removeItem(at: blocker)
        try FileManager.default.createDirectory(at: blocker, withIntermediateDirectories: false)
        try store.save([Self.music, Self.beep])
        #expect(Self.becomesReadable(signal, withinMilliseconds: 5000))
        #expect(store.durableCopyFailure() == nil)
    }

    private static func becomesReadable(_ fd: Int32, withinMilliseconds timeout: Int32) -> Bool {
        var watch = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&watch, 1, timeout) == 1 && watch.revents & Int16(POLLIN) != 0
    }

    @Test func aJournalWithoutDurableCopyHasNoCopySignal() {
        #expect(JournalStore(path: "/nonexistent/journal.json").durableCopySignal == nil)
    }

    @Test func defaultLogPathIsInTheRuntimeFolder() {
        #expect(JournalStore.defaultLogPath(environment: ["XDG_RUNTIME_DIR": "/run/user/1000"])
            == "/run/user/1000/audio-policyd/journal.json")
        #expect(JournalStore.defaultLogPath(environment: [:]) == nil)
        #expect(JournalStore.defaultLogPath(environment: ["XDG_RUNTIME_DIR": "relative"]) == nil)
    }

    @Test func anEmptyFileIsAnEmptyJournal() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("journal.json").path
        try Data().write(to: URL(fileURLWithPath: path))
        #expect(JournalStore(path: path).load() == .empty)
    }

    @Test func defaultPathFollowsXDG() {
        #expect(JournalStore.defaultPath(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"]) == "/s/audio-policyd/journal.json")
        #expect(JournalStore.defaultPath(environment: ["HOME": "/h"]) == "/h/.local/state/audio-policyd/journal.json")
        // A relative XDG_STATE_HOME is invalid by the spec and ignored.
        #expect(JournalStore.defaultPath(environment: ["XDG_STATE_HOME": "rel", "HOME": "/h"])
            == "/h/.local/state/audio-policyd/journal.json")
    }

    /// The file's lines, each with its newline.
    static func lines(_ path: String) throws -> [Data] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return data.split(separator: UInt8(ascii: "\n")).map { Data($0) + Data("\n".utf8) }
    }

    static func temporaryFolder() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("journal-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
