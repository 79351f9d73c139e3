import ArgumentParser
import AudioPolicy
import AudioPolicyDaemon
import ControlProtocol
import FoundationEssentials
import FoundationGaps
import Glibc

/// `audio-policyd status`: what the running daemon is doing to every stream.
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show every stream the daemon sees: class, state, policy factor, and the Now Playing owner.")

    @OptionGroup var control: SocketOption

    @Flag(name: .long, help: "Print JSON (keys: nowPlaying, streams, policy, server).")
    var json = false

    func run() throws {
        let status = try DaemonStatus.fetch(path: control.path)
        if json {
            print(try DaemonStatus.json(status))
            return
        }
        print("policy: \((status.policyFiles ?? [status.policy]).joined(separator: " + "))")
        for line in Self.classOrigins(status) { print(line) }
        print("server: \(status.server ?? "not connected")")
        print("now playing: \(status.nowPlaying.map { "\(StatusReport.label(application: $0.application, appID: $0.appID))\($0.pid.map { " (pid \($0))" } ?? "")\($0.player.map { " through \($0)" } ?? "")" } ?? "nobody")")
        let header = ["INDEX", "APPLICATION", "ROLE", "CLASS", "STATE", "SOUND", "FACTOR", "RULE"]
        let rows = status.streams.map { stream in
            [stream.index.map(String.init) ?? stream.hook ?? "-",
             StatusReport.label(application: stream.application, appID: stream.appID), stream.role ?? "-",
             stream.class + (stream.spoken ? " (spoken)" : ""),
             stream.state.rawValue + (stream.muted ? " (muted)" : ""),
             Self.sound(stream),
             String(printf: "%.2f", stream.factor), stream.rule]
        }
        printTable([header] + rows)
    }

    /// For each class of a stream shown, the settings a drop-in changed and the file each came from:
    /// `class ambient: unfocused (/etc/audio-policyd/policy.d/50-games.toml:2), …`. The
    /// base's own settings are left out (they are the policy's, nothing to point at).
    static func classOrigins(_ status: StatusReport) -> [String] {
        guard let files = status.policyFiles, files.count > 1, let settings = status.classSettings else { return [] }
        let base = files[0]
        let shown = Set(status.streams.map(\.class))
        return shown.sorted().compactMap { name -> String? in
            let changed = (settings[name] ?? [:]).filter { !$0.value.hasPrefix(base + ":") }
            guard !changed.isEmpty else { return nil }
            return "class \(name): " + changed.sorted { $0.key < $1.key }.map { "\($0.key) (\($0.value))" }
                .joined(separator: ", ")
        }
    }

    /// `audible` or `silent` as the daemon knows it; `(measured)` while its meter runs.
    static func sound(_ stream: StatusReport.Stream) -> String {
        guard let audible = stream.audible else { return "-" }
        return (audible ? "audible" : "silent") + (stream.measured == true ? " (measured)" : "")
    }
}

/// Prints rows as left-aligned columns.
func printTable(_ rows: [[String]]) {
    guard let first = rows.first else { return }
    let widths = first.indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
    for row in rows {
        print(row.enumerated().map { column, cell in
            column == row.count - 1 ? cell : cell.padded(to: widths[column])
        }.joined(separator: "  "))
    }
}
