import FoundationGaps

/// What a soak run did and found: the counts its summary prints, and every violation of the promise
/// (audio never left quiet, muted or paused by something that is over; the user's levels kept; no
/// crash; no leak).
public struct SoakReport: Sendable {
    public struct Violation: Sendable, CustomStringConvertible {
        /// Seconds into the run.
        public var at: Double
        public var what: String
        public var description: String { String(printf: "%7.1fs  ", at) + what }
    }

    public var server: String?
    public var seconds: Double = 0
    public var streamsStarted = 0
    public var startedCorked = 0
    public var uncorked = 0
    public var gracefulQuits = 0
    public var abruptQuits = 0
    /// Abrupt quits of a stream the daemon had ducked or muted at that moment.
    public var abruptQuitsMidInterruption = 0
    public var lostToRestarts = 0
    public var userVolumeChanges = 0
    public var userMuteChanges = 0
    /// User changes the daemon wrote over within ``UserMixer/raceWindow`` (`--users-avoid-ramps`), for
    /// which the level before them is accepted too.
    public var racedUserChanges = 0
    public var serverRestarts = 0
    public var daemonKills = 0
    public var daemonStarts = 0
    public var checkpoints = 0
    /// Headsets that came, and how they went: lost with streams on them, a profile switch (the same
    /// device back at once), or with nothing left on them after the user moved the streams away.
    public var outputs = 0
    public var outputsLost = 0
    public var outputProfileSwitches = 0
    public var outputsLeftEmpty = 0
    /// Surviving streams compared at checkpoints, and saved entries compared.
    public var streamsChecked = 0
    public var entriesChecked = 0
    /// The daemon's resident memory at each checkpoint, KiB, with the daemon's start number.
    public var residentKiB: [(daemon: Int, kiB: Int)] = []
    /// Seconds each checkpoint waited for the daemon to settle.
    public var settleSeconds: [Double] = []
    public var violations: [Violation] = []
    /// Saved entries pipewire-pulse reads back at levels nobody chose: not violations there (its
    /// read-back lags behind WirePlumber's own state), shown for what they are.
    public var notes: [String] = []

    /// The summary `audio-policyd soak` prints.
    public var summary: String {
        var lines: [String] = []
        lines.append("soak on \(server ?? "?"): " + String(printf: "%.0f s", seconds))
        lines.append("  streams: \(streamsStarted) started (\(startedCorked) corked, \(uncorked) of them uncorked later), "
            + "\(gracefulQuits) ended, \(abruptQuits) abrupt quits (\(abruptQuitsMidInterruption) mid-duck or mute), "
            + "\(lostToRestarts) lost to server restarts")
        lines.append("  user: \(userVolumeChanges) volume changes, \(userMuteChanges) mute changes"
            + (racedUserChanges > 0 ? ", \(racedUserChanges) raced by the daemon's write (the level before accepted too)" : ""))
        lines.append("  server restarts: \(serverRestarts); daemon kills (SIGKILL): \(daemonKills); daemon starts: \(daemonStarts)")
        lines.append("  outputs: \(outputs) headsets (\(outputsLost) lost with streams on them, "
            + "\(outputProfileSwitches) profile switches, \(outputsLeftEmpty) left after the user moved the streams away)")
        let settle = settleSeconds.isEmpty ? "" : String(printf: " (settled in %.1f s at most)", settleSeconds.max() ?? 0)
        lines.append("  checkpoints: \(checkpoints)\(settle); \(streamsChecked) surviving streams and \(entriesChecked) saved entries checked")
        if let first = residentKiB.first, let last = residentKiB.last, let top = residentKiB.map(\.kiB).max() {
            lines.append(String(printf: "  daemon RSS: first %.1f MiB, last %.1f MiB, max %.1f MiB",
                                Double(first.kiB) / 1024, Double(last.kiB) / 1024, Double(top) / 1024))
        }
        if !notes.isEmpty {
            lines.append("  notes: \(notes.count) saved entries read back (pipewire-pulse) at a level nobody chose; the first:")
            lines += notes.prefix(3).map { "    " + $0 }
        }
        lines.append("  violations: \(violations.count)")
        lines += violations.map { "    " + $0.description }
        return lines.joined(separator: "\n")
    }
}
