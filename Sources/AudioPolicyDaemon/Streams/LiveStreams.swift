import AudioPolicy
import SessionBus
import SoundBackend

/// Every live sink input's one record (``LiveStream``), by index: the table intake, actuation, the
/// players and publication all read, each part writing only its own fields.
///
/// A stream begins and ends here, from one place (server intake: ``begin(_:on:sandbox:)``,
/// ``end(_:)``), so no part keeps a table of its own that must be kept in step with the others', and an
/// ended stream's meter is closed with its record. Touched only on the loop's thread.
final class LiveStreams {
    private var records: [UInt32: LiveStream] = [:]

    /// The record of sink input `index`, while it lives.
    subscript(index: UInt32) -> LiveStream? { records[index] }

    /// Whether the server has told of sink input `index`, and it has not ended.
    func knows(_ index: UInt32) -> Bool { records[index] != nil }

    /// How many streams live.
    var count: Int { records.count }

    /// The live sink inputs, ascending.
    var indexes: [UInt32] { records.keys.sorted() }

    /// The live sink input an engine stream id stands for: never one of another server instance that
    /// was given the same index.
    func index(of id: StreamID) -> UInt32? {
        id.playbackIndex.flatMap { records[$0]?.id == id ? $0 : nil }
    }

    /// The engine's id of live sink input `index`.
    func id(of index: UInt32) -> StreamID? { records[index]?.id }

    /// Changes the record of `index` in place, if it lives; returns what `change` returned.
    @discardableResult
    func update<Result>(_ index: UInt32, _ change: (inout LiveStream) -> Result) -> Result? {
        guard records[index] != nil else { return nil }
        return change(&records[index]!)
    }

    /// A new sink input of server instance `server`: its record, with what its process turned out to be.
    @discardableResult
    func begin(_ input: SinkInput, on server: ServerInstance, sandbox: Sandbox.Identity?) -> LiveStream {
        let live = LiveStream(input, on: server, sandbox: sandbox)
        records[input.index] = live
        return live
    }

    /// Sink input `index` ended, and every part has had its say: its record goes, its meter closed.
    @discardableResult
    func end(_ index: UInt32) -> LiveStream? {
        let ended = records.removeValue(forKey: index)
        ended?.measurement?.meter.close()
        return ended
    }
}
