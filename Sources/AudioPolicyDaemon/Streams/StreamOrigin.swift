import AudioPolicy
import SessionBus

/// Where a stream comes from — its process lineages and app ids — and the player found from that: the
/// players' part of the stream's record (``LiveStream/origin``).
///
/// Read once when the stream starts; the lineages only once there is a player to look for in them
/// (reading them costs tens of microseconds a process: not on a new stream's way to its decision when
/// no player could match).
struct StreamOrigin {
    var pids: [Int32]
    var lineages: [[Int32]]?
    var appIDs: Set<String>
    /// The app's pid inside its sandbox, when it runs in one (``SandboxedStreams``).
    var sandboxPID: Int32?
    /// The player it is mapped to now: what the engine was told.
    var player: PlayerID?

    init(_ properties: Properties) {
        pids = PlayerMatch.pids(in: properties)
        appIDs = PlayerMatch.appIDs(in: properties)
        sandboxPID = properties[SandboxedStreams.sandboxPIDKey].flatMap { Int32($0) }
    }

    mutating func readLineages() -> [[Int32]] {
        if let lineages { return lineages }
        let read = pids.map { ProcessTree.lineage(of: $0) }
        lineages = read
        return read
    }
}
