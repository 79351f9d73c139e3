import AudioPolicy
import FoundationEssentials
import FoundationGaps
import Glibc
import SoundBackend

/// The levels our ducks settled at, kept from run to run: `settled-ducks.json` beside the journal's
/// durable copy (the state folder).
///
/// A server that saves levels can give a stream one of our ducks long after the run that wrote it
/// (``SavedLevelsBook/rememberSettled(_:)``: WirePlumber's file is a snapshot of some quiet second, and a
/// server restart brings it back), when no journal tells of it any more: a clean stop clears the
/// journal, and its entries go once restored. This file does not go; it is bounded instead (16 levels
/// for each of 64 keys, about 10 KB at most), and written a few seconds after it grows, not on every
/// duck.
///
/// ```json
/// {"ducks":[{"key":"sink-input-by-media-role:music","own":[50416,41459],"volume":[23401,19243]}],"version":1}
/// ```
struct SettledDuckFile: Codable, Equatable {
    static let currentVersion = 1
    static let name = "settled-ducks.json"

    var version: Int
    var ducks: [SettledDuck]

    init(ducks: [SettledDuck]) {
        version = Self.currentVersion
        self.ducks = ducks
    }

    /// Where the file is: the folder of the journal's durable copy, else of its log.
    static func path(besides store: JournalStore) -> String {
        (store.durableCopy ?? store.path).pathFolder + "/" + name
    }

    /// The ducks the file holds: none when there is no file; nil when it cannot be read (another
    /// version, cut short, not ours), which the caller reports (the next save replaces it).
    static func load(_ path: String) -> [SettledDuck]? {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        guard let file = try? JSONDecoder().decode(SettledDuckFile.self, from: data),
              file.version == currentVersion else { return nil }
        return file.ducks
    }

    /// Replaces the file with `ducks` (write and rename: the old file or the new, never a mix).
    static func save(_ ducks: [SettledDuck], to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = try encoder.encode(SettledDuckFile(ducks: ducks))
        data.append(UInt8(ascii: "\n"))
        close(try JournalStore.replaceFile(path, with: data, durably: false))
    }
}
