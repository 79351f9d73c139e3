import AudioPolicy
import SessionBus

/// Where a stream comes from, for finding its player: its process lineages and app ids.
///
/// Read once when the stream starts; the lineages only once there is a player to look for in them
/// (reading them costs tens of microseconds a process: not on a new stream's way to its decision when
/// no player could match).
struct StreamOrigin {
    var pids: [Int32]
    var lineages: [[Int32]]?
    var appIDs: Set<String>

    init(_ properties: Properties) {
        pids = PlayerMatch.pids(in: properties)
        appIDs = PlayerMatch.appIDs(in: properties)
    }

    mutating func readLineages() -> [[Int32]] {
        if let lineages { return lineages }
        let read = pids.map { ProcessTree.lineage(of: $0) }
        lineages = read
        return read
    }
}
