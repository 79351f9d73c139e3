import AudioPolicy
@testable import AudioPolicyDaemon
import Foundation
import Testing

/// The journal keeps its entries in the order they last changed what the server may have saved
/// (``JournalOrder``), through the file, so that a recovery after a kill takes a silent start of a key
/// for the stream of it faded out last and writes the own level of the stream changed last last.
@Suite("Journal: the order entries changed in")
struct JournalOrderTests {
    /// A music stream of one key at index `index`, own level `volume`, muted by the policy or not.
    static func music(_ index: UInt32, volume: [UInt32], policyMuted: Bool = false) -> JournalEntry {
        JournalEntry(sinkInput: index, restoreID: "sink-input-by-media-role:music", application: "mpv", pid: 40 + Int(index),
                     volume: volume, channelMap: [1, 2], muted: false, policyMuted: policyMuted)
    }

    @Test("entries are recovered in the order they last changed, not by index; a change of a saved-mute mark alone moves none")
    func recoveredInChangeOrder() {
        var journal = Journal(store: nil)
        // The stream with the higher index is faded out first, the lower one after it.
        _ = journal.record(Self.music(9, volume: [60000, 50000], policyMuted: true))
        _ = journal.record(Self.music(4, volume: [45000, 40000], policyMuted: true))
        var marked = Self.music(9, volume: [60000, 50000], policyMuted: true)
        marked.savedMuteAbove = 12
        _ = journal.record(marked)
        #expect(journal.all.map(\.sinkInput) == [9, 4])
        // Its user changes the first one's level under the fade: it changed last now.
        _ = journal.record(Self.music(9, volume: [30000, 20000], policyMuted: true))
        #expect(journal.all.map(\.sinkInput) == [4, 9])
        #expect(journal.beginRecovery().map(\.sinkInput) == [4, 9])
    }

    @Test("the order survives the file: what a killed run leaves is read back in it")
    func orderSurvivesTheFile() throws {
        let folder = try JournalTests.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = JournalStore(path: folder.appendingPathComponent("journal.json").path)
        var journal = Journal(store: store)
        _ = journal.record(Self.music(9, volume: [60000, 50000], policyMuted: true))
        _ = journal.record(Self.music(4, volume: [45000, 40000], policyMuted: true))
        store.flush()
        #expect(JournalStore(path: store.path).load() == .entries([Self.music(9, volume: [60000, 50000], policyMuted: true),
                                                                    Self.music(4, volume: [45000, 40000], policyMuted: true)]))
    }
}
