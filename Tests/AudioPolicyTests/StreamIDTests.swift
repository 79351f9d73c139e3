import Testing
@testable import AudioPolicy

/// A backend stream's id names its server instance, so that an index a restarted server gives again is
/// another stream, while logs, `status` and recorded fixtures still print the index alone.
@Suite("StreamID")
struct StreamIDTests {
    let before = ServerInstance(backend: .pulse, number: 7)
    let after = ServerInstance(backend: .pulse, number: 8)

    @Test func theSameIndexOnAnotherInstanceIsAnotherStream() {
        #expect(StreamID.playback(12, on: before) != StreamID.playback(12, on: after))
        #expect(StreamID.playback(12, on: before) == StreamID.playback(12, on: before))
        #expect(StreamID.capture(3, on: before) != StreamID.capture(3, on: after))
        // Control: another index on one instance is another stream too.
        #expect(StreamID.playback(12, on: before) != StreamID.playback(13, on: before))
    }

    @Test func printsTheIndexAloneAndTellsItsParts() {
        let id = StreamID.playback(12, on: after)
        #expect(id.rawValue == "12")
        #expect(StreamID.capture(3, on: after).rawValue == "capture-3")
        #expect(id.playbackIndex == 12)
        #expect(id.server == after)
        #expect(StreamID("music").server == nil)
        #expect(StreamID.capture(3, on: after).playbackIndex == nil)
    }

    @Test func ordersByIndexFirst() {
        #expect(StreamID.playback(2, on: after) < StreamID.playback(10, on: before))
        #expect(StreamID.playback(10, on: before) < StreamID.playback(10, on: after))
        #expect(!(StreamID.playback(10, on: after) < StreamID.playback(10, on: before)))
    }

    /// The engine copies and hashes ids on every event: naming the server must not make an id larger
    /// than a fixture's named one (a backend's name as a string made it 29 bytes instead of 17).
    @Test func isNoLargerThanANamedID() {
        #expect(MemoryLayout<StreamID>.size <= MemoryLayout<String>.size + 1)
    }
}
