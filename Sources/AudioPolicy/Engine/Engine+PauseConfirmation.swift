extension Engine {
    /// Falls back to fade-and-mute for every stream whose player was asked to pause (to be resumed) and
    /// has not reported Paused within the policy's `pause-timeout`.
    ///
    /// The engine decides this, not the shell: the shell only reports what players and the server say
    /// (``Event/playback(_:playing:)``, from MPRIS and from the stream being corked), so a fixture can
    /// show a player that ignores Pause, and the timeout is a policy setting. A player that fails the
    /// Pause call outright, or is not on the bus, is reported at once with ``Event/pauseIgnored(_:)``.
    mutating func confirmPauses(now: Milliseconds, into out: inout [Command]) {
        let timeout = policy.pauseTimeout
        let late = streams.dueIDs(where: { $0.isLive && ($0.pauseTimesOut(after: timeout).map { $0 <= now } ?? false) })
        for id in late {
            guard let stream = streams[id], stream.isLive,
                  let due = stream.pauseTimesOut(after: timeout), due <= now else { continue }
            pauseIgnored(id, now: now, reason: "its player still played \(timeout) ms after Pause",
                         into: &out)
        }
    }
}
