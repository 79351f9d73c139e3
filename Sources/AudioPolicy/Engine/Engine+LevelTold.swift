/// A stream whose level the server told only after it started (``Event/levelTold(_:muted:)``): what the
/// engine asked of it meanwhile, which the shell could not write, is asked again.
extension Engine {
    /// Restates the stream's duck, fade or mute from where it is now: a ramp still on its way as the rest
    /// of it (the shell's copy of it may have run out, or on a different clock), a steady duck as a write
    /// of its factor, the policy's mute as a mute when the stream arrived without one. The engine, not
    /// the shell, knows what it asked for; a stream left alone needs nothing.
    mutating func restateLevel(_ id: StreamID, arrivedMuted: Bool, now: Milliseconds, into out: inout [Command]) {
        guard let stream = streams[id], stream.isLive, !stream.isHook else { return }
        let policyMutes = stream.policyMutes
        let ramp = stream.ramp
        let here = ramp.value(at: now)
        let action: String
        if !ramp.isSteady, now < ramp.end {
            let rest = ramp.end - now
            let fades = policyMutes && ramp.to == 0
            out.append(fades ? .mute(id, from: here, fade: rest) : .ramp(id, from: here, to: ramp.to, duration: rest))
            action = fades ? "its fade-out resumed from where it is" : "its ramp resumed from where it is"
        } else if policyMutes {
            guard !arrivedMuted else { return }
            out.append(.mute(id, from: here, fade: 0))
            action = "muted, as the policy had it meanwhile"
        } else if here != 1 {
            out.append(.ramp(id, from: here, to: here, duration: 0))
            action = "its duck written"
        } else {
            return
        }
        // The log and `explain` say why a stream was written a few ms after it started.
        out.append(.decision(decision(stream, reason: "the server told its level only after it started", action: action)))
    }
}
