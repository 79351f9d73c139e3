/// A stream the server started at one of our saved levels or mutes, put right once the engine has
/// decided about it (``Event/startedAtOurSave(_:levelAway:mutedByUs:)``).
extension Engine {
    /// Answers the news with ``Command/putBack(_:level:unmute:)`` by the levels stage's rule
    /// (``SavedStartCorrection``): its own level where the policy leaves its level alone (factor 1, no
    /// ramp), the unmute where the policy does not mute it. The engine, not the shell, knows both.
    mutating func putBackSavedStart(_ id: StreamID, levelAway: Bool, mutedByUs: Bool, now: Milliseconds,
                                    into out: inout [Command]) {
        guard let stream = streams[id], stream.isLive, !stream.isHook else { return }
        let policyMuted = stream.policyMutes
        // Its level left alone: at factor 1, and no ramp still on its way (a duck and its restore over is
        // alone again).
        let untouched = !policyMuted && stream.ramp.to == 1 && (stream.ramp.isSteady || now >= stream.ramp.end)
        // A mute its user has set since is theirs, whatever the server saved before.
        let correction = SavedStartCorrection.of(levelAway: levelAway, mutedByUs: mutedByUs && !stream.userMuted,
                                                 untouched: untouched, policyMuted: policyMuted)
        guard correction.writeOwn || correction.unmute else { return }
        out.append(.putBack(id, level: correction.writeOwn, unmute: correction.unmute))
        let action = [correction.writeOwn ? "put back at its own level" : nil, correction.unmute ? "unmuted" : nil]
            .compactMap { $0 }.joined(separator: " and ")
        out.append(.decision(decision(stream, reason: "the server started it at a level or mute it saved from our change of another stream",
                                      action: action)))
    }
}
