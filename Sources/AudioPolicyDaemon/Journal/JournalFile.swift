import ControlProtocol
import FoundationEssentials
import Glibc

/// One record of the journal's on-disk log (``JournalStore``): the whole journal as one line of JSON.
///
/// ```json
/// {"entries":[{"application":"Rhythmbox","channelMap":[1,2],"muted":false,"pausedPlayers":[],
///   "pid":4242,"policyMuted":false,"restoreID":"sink-input-by-media-role:music","sinkInput":7,
///   "volume":[55705,45875]}],"version":1}
/// ```
public struct JournalFile: Codable, Hashable, Sendable {
    /// The format this code reads and writes.
    public static let currentVersion = 1

    public var version: Int
    /// In the journal's order (``Journal/all``): the entries a recovery undoes, then this run's in the
    /// order they last changed what the server may have saved (``JournalOrder``), which the next run's
    /// recovery needs; a stream may appear twice, its later entry the newer. Equal journals encode to
    /// equal bytes.
    public var entries: [JournalEntry]

    public init(entries: [JournalEntry]) {
        self.version = Self.currentVersion
        self.entries = entries
    }

    /// Why a journal file cannot be used.
    public struct Unreadable: Error, CustomStringConvertible, Equatable {
        public var description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// The record's bytes: one line of JSON, keys sorted, so equal journals are equal bytes.
    public func encoded() -> Data {
        Self.record(entries.map(Self.encoded))
    }

    /// One entry's JSON, as it appears in a record. Encoding is most of a record's cost, and an
    /// entry is known before the change that records it: ``JournalStore`` encodes it ahead.
    public static func encoded(_ entry: JournalEntry) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Encoding plain integers, strings and booleans cannot fail.
        return (try? encoder.encode(entry)) ?? Data("{}".utf8)
    }

    /// A record from its entries' JSON (in the journal's order): `{"entries":[…],"version":1}` and a
    /// newline — the keys in sorted order, as the decoder expects them in any order.
    static func record(_ entries: [Data]) -> Data {
        // One buffer of the record's size, filled by copies: a `Data` grown from `String.UTF8View`s and
        // arrays went through the runtime's dynamic casts on every journal save (bench's profile).
        var bytes: [UInt8] = []
        bytes.reserveCapacity(entries.reduce(recordPrefix.count + recordSuffix.count) { $0 + $1.count + 1 })
        bytes.append(contentsOf: recordPrefix)
        for (position, entry) in entries.enumerated() {
            if position > 0 { bytes.append(UInt8(ascii: ",")) }
            entry.withUnsafeBytes { bytes.append(contentsOf: $0) }
        }
        bytes.append(contentsOf: recordSuffix)
        return Data(bytes)
    }

    private static let recordPrefix = Array(#"{"entries":["#.utf8)
    /// The record's end, with its newline.
    private static let recordSuffix = Array(#"],"version":\#(currentVersion)}"#.utf8) + [UInt8(ascii: "\n")]

    /// Reads a journal file's bytes; throws ``Unreadable`` for anything that is not a whole journal
    /// of a version this code knows (a file cut short, another program's file, a future format).
    public static func decode(_ data: Data) throws(Unreadable) -> JournalFile {
        let file: JournalFile
        if JSONNesting.isTooDeep(data) { throw Unreadable(description: JSONNesting.reason) }
        do {
            file = try JSONDecoder().decode(JournalFile.self, from: data)
        } catch let DecodingError.dataCorrupted(context) {
            throw Unreadable(description: Self.reason(context, fallback: "not JSON (cut short?)"))
        } catch let DecodingError.keyNotFound(key, context) {
            throw Unreadable(description: "missing \"\(Self.path(context.codingPath + [key]))\"")
        } catch let DecodingError.typeMismatch(_, context) {
            throw Unreadable(description: "wrong type at \"\(Self.path(context.codingPath))\"")
        } catch let DecodingError.valueNotFound(_, context) {
            throw Unreadable(description: "null at \"\(Self.path(context.codingPath))\"")
        } catch {
            throw Unreadable(description: "\(error)")
        }
        guard file.version == currentVersion else {
            throw Unreadable(description: "version \(file.version); this audio-policyd reads version \(currentVersion)")
        }
        for entry in file.entries where entry.channelMap.count != entry.volume.count && !entry.channelMap.isEmpty {
            throw Unreadable(description: "sink input \(entry.sinkInput): \(entry.volume.count) volumes but "
                + "\(entry.channelMap.count) channel positions")
        }
        return file
    }

    private static func path(_ keys: [CodingKey]) -> String {
        keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            .replacing(".[", with: "[")
    }

    private static func reason(_ context: DecodingError.Context, fallback: String) -> String {
        context.codingPath.isEmpty ? fallback : "bad value at \"\(path(context.codingPath))\""
    }
}
