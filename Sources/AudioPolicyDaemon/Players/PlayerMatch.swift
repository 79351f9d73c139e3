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
        /// App ids it goes by: its Flatpak id, its `DesktopEntry`.
        public var appIDs: Set<String>

        public init(player: PlayerID, pid: Int32?, appIDs: Set<String> = []) {
            self.player = player
            self.pid = pid
            self.appIDs = appIDs
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
    public static func player(lineages: [[Int32]], appIDs: Set<String>, among candidates: [Candidate]) -> PlayerID? {
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
        return candidates.first { !$0.appIDs.isDisjoint(with: appIDs) }?.player
    }
}

extension MPRISPlayer {
    /// The engine's name for this player.
    public var id: PlayerID { PlayerID(busName) }

    /// Matching facts for ``PlayerMatch``.
    var candidate: PlayerMatch.Candidate {
        var ids = Set<String>()
        if let flatpakID { ids.insert(flatpakID) }
        if let desktopEntry, !desktopEntry.isEmpty { ids.insert(desktopEntry) }
        return PlayerMatch.Candidate(player: id, pid: pid, appIDs: ids)
    }
}
