/// The Now Playing app's last window closing (visionOS): its playback pauses, and people resume it from
/// the system's controls — here the play key, through our Now Playing player — without opening a window.
///
/// Opt-in per class or rule (`closed-window = "pause"`, ``ClosedWindowAction``): tray players keep
/// playing after their window closes on purpose. The pause is the user's kind (nothing marks it as the
/// engine's to undo), so the daemon never resumes it; Now Playing stays with the app, so the play key
/// reaches it. Only the Now Playing app: another app's window closing leaves its sound to the policy's
/// other rules (a game that plays on with no window is not what the person chose to listen to).
extension Engine {
    mutating func lastWindowClosed(_ identity: AppIdentity, now: Milliseconds, into out: inout [Command]) {
        guard let owner = nowPlaying.ownerApp else { return }
        let live = streams.values.filter { $0.isLive && !$0.isHook }
        guard apps(of: identity, among: live).contains(owner) else { return }
        for id in streams.ids {
            guard var stream = streams[id], stream.isLive, !stream.isHook, stream.app == owner, stream.playing,
                  stream.pausedBy == nil, stream.outputLoss == nil else { continue }
            let ruled = stream.classification.rule?.closedWindow
            let source = ruled == nil ? "class \(stream.interruptionClass.name)" : "its rule"
            let reason = "the Now Playing app's last window closed"
            switch ruled ?? stream.interruptionClass.closedWindow {
            case .nothing:
                out.append(.decision(decision(stream, reason: reason,
                                              action: "plays on (\(source): closed-window = nothing)")))
            case .pause:
                guard let player = stream.player else {
                    out.append(.decision(decision(stream, reason: reason + " (\(source): closed-window = pause)",
                                                  action: "plays on: no player to pause it through")))
                    continue
                }
                stream.playing = false
                streams[id] = stream
                out.append(.pause(id, player))
                out.append(.decision(decision(stream, reason: reason + " (\(source): closed-window = pause)",
                                              action: "paused indefinitely (stays Now Playing)", outcome: .paused)))
            }
        }
    }
}
