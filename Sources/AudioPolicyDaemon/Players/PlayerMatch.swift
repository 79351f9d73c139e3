import AudioPolicy
import SessionBus

/// Which MPRIS player plays a stream: pure, so it is tested with made-up process tables.
///
/// A player plays a stream when its process is the stream's process or one of that process's
/// ancestors (browsers play from child processes), or when both carry the same Flatpak app id (a
/// sandboxed player reaches the bus through a proxy, so its D-Bus pid says nothing). The nearest
/// ancestor wins, so a player nested in another app's process tree beats the outer one; between
/// equally near candidates, the earlier one in the list wins.
public enum PlayerMatch {
    /// What is known of one player for matching.
    public struct Candidate: Hashable, Sendable {
        public var player: PlayerID
        /// The pid the bus reports for the player's connection.
        public var pid: Int32?
        /// App ids it goes by: its Flatpak id or Snap name, its `DesktopEntry`.
        public var appIDs: Set<String>
        /// The pid in its name's instance suffix (`mpv.instance2`): a sandboxed player's pid in its sandbox.
        public var instance: Int32?

        public init(player: PlayerID, pid: Int32?, appIDs: Set<String> = [], instance: Int32? = nil) {
            self.player = player
            self.pid = pid
            self.appIDs = appIDs
            self.instance = instance
        }
    }

    /// The stream property keys that carry a process id (libpulse's, and PipeWire's host-side one).
    public static let pidKeys = ["application.process.id", "pipewire.sec.pid"]
    /// The stream property keys that carry a sandboxed app's id.
    public static let appIDKeys = ["pipewire.access.portal.app_id", "application.flatpak.id"]

    /// The process ids a stream's properties name.
    public static func pids(in properties: Properties) -> [Int32] {
        var pids: [Int32] = []
        for key in pidKeys {
            if let pid = properties[key].flatMap({ Int32($0) }), pid > 0, !pids.contains(pid) { pids.append(pid) }
        }
        return pids
    }

    /// The app ids a stream's properties name.
    public static func appIDs(in properties: Properties) -> Set<String> {
        Set(appIDKeys.compactMap { properties[$0] }.filter { !$0.isEmpty })
    }

    /// The player for a stream whose process lineages (each nearest first, as
    /// ``ProcessTree/lineage(of:limit:parent:)`` gives them) and app ids are known; nil if none plays it.
    /// Between players of one app id, the one whose instance suffix is the stream's pid in its sandbox
    /// wins (two sandboxed instances of one app).
    public static func player(lineages: [[Int32]], appIDs: Set<String>, sandboxPID: Int32? = nil,
                              among candidates: [Candidate]) -> PlayerID? {
        var best: (depth: Int, player: PlayerID)?
        for candidate in candidates {
            guard let pid = candidate.pid, pid > 1 else { continue }
            for lineage in lineages {
                guard let depth = lineage.firstIndex(of: pid) else { continue }
                if best.map({ depth < $0.depth }) ?? true {
                    best = (depth, candidate.player)
                }
            }
        }
        if let best { return best.player }
        guard !appIDs.isEmpty else { return nil }
        let sharing = candidates.filter { !$0.appIDs.isDisjoint(with: appIDs) }
        let instance = sandboxPID.flatMap { pid in sharing.first { $0.instance == pid } }
        return (instance ?? sharing.first)?.player
    }
}

extension MPRISPlayer {
    /// The engine's name for this player.
    public var id: PlayerID { PlayerID(busName) }

    /// Matching facts for ``PlayerMatch``.
    var candidate: PlayerMatch.Candidate {
        var ids = Set<String>()
        if let appID { ids.insert(appID) }
        if let desktopEntry, !desktopEntry.isEmpty { ids.insert(desktopEntry) }
        return PlayerMatch.Candidate(player: id, pid: pid, appIDs: ids, instance: Sandbox.instancePID(busName: busName))
    }
}
