/// Reconciliation: the engine works out what every stream should be subjected to now, from the
/// interruptions in force, and emits the commands that get it there. Deciding from the whole state
/// (rather than from the last event alone) is what makes overlapping interruptions a stack: when the
/// top one ends, what is below is simply what remains in force.
extension Engine {
    mutating func reconcile(now: Milliseconds, into out: inout [Command]) {
        expireHolds(now: now)
        escalateDuePrimaries(now: now, into: &out)
        // Grouped by app: a stream is never interrupted by its own app, so each stream only looks at
        // the other apps' interrupters (with 200 streams of one player, that is almost none).
        var interruptersByApp: [String: [TrackedStream]] = [:]
        var apps: [String] = []
        for position in streams.indices {
            let kind = streams.glance(at: position).kind
            guard kind != .mix, kind != .ambient else { continue }
            let stream = streams[position: position]
            guard isInterrupting(stream, now: now) else { continue }
            if interruptersByApp[stream.app] == nil { apps.append(stream.app) }
            interruptersByApp[stream.app, default: []].append(stream)
        }
        let interrupters = apps.map { ($0, interruptersByApp[$0] ?? []) }
        // Whether any interrupter's class interrupts a class at all, by class name: most streams are
        // of a class nothing in force touches, and are passed over without copying their record. A
        // policy has a handful of classes: they are looked for in a list, since hashing every stream's
        // class name was a tenth of the reconciliation's share of a prompt in the daemon.
        var exposed: [(className: String, reachable: Bool)] = []
        let unfocused = unfocusedApps()
        for position in streams.indices {
            let glance = streams.glance(at: position)
            guard glance.isLive, !glance.isHook else { continue }
            if glance.isUntouched, unfocused.isEmpty || !unfocused.contains(streams[position: position].app) {
                let reachable: Bool
                if let known = exposed.first(where: { $0.className == glance.className }) {
                    reachable = known.reachable
                } else {
                    let target = streams[position: position].interruptionClass
                    reachable = interrupters.contains { _, group in
                        group.contains { policy.interrupts($0.interruptionClass, target) }
                    }
                    exposed.append((glance.className, reachable))
                }
                if !reachable { continue }
            }
            let stream = streams[position: position]
            // Held muted by its output's loss: nothing else changes it until that is over.
            if stream.outputLoss?.holdsMute == true { continue }
            var effect = Demand()
            for (app, streams) in interrupters where app != stream.app {
                demand(on: stream, from: streams, into: &effect)
            }
            if unfocused.contains(stream.app), let (asked, reason) = unfocusedEffect(on: stream) {
                effect.add(asked, from: stream.interruptionClass, reason: reason, byFocus: true)
            }
            // Nothing asked of a stream nothing was done to: nothing to do (most streams, most times).
            if effect.effect == .none, stream.effect == .none, !stream.userOwnsVolume, !stream.userOwnsPlayback { continue }
            apply(effect, at: position, now: now, into: &out)
        }
        checkNowPlaying()
        if nowPlaying.owner != lastOwner {
            lastOwner = nowPlaying.owner
            out.append(.nowPlaying(lastOwner))
        }
        updateMeasurements(now: now, into: &out)
    }

    // MARK: - Time

    /// Drops the ended streams whose hold is over. Runs after every event: the records are read in place
    /// (a filter copied all of them, a retain and a release per reference each, a sixth of the engine's
    /// share of a prompt among 200 streams).
    private mutating func expireHolds(now: Milliseconds) {
        let expired = streams.dueIDs { stream in
            stream.endedAt.map { $0 + stream.interruptionClass.hold <= now } ?? false
        }
        for id in expired { drop(id) }
    }

    private mutating func escalateDuePrimaries(now: Milliseconds, into out: inout [Command]) {
        for position in streams.indices where streams.glance(at: position).kind == .primary {
            let stream = streams[position: position]
            let id = stream.id
            guard stream.isLive, !stream.escalated,
                  stream.interruptionClass.kind == .primary, stream.playing, stream.pausedBy == nil,
                  let due = stream.graceEnds, now >= due else { continue }
            escalate(id, now: now, into: &out)
        }
    }

    /// A primary stream takes over: other apps' players it outranks are paused for good (the engine
    /// forgets them: only the user resumes them), and its app becomes Now Playing.
    mutating func escalate(_ id: StreamID, now: Milliseconds, into out: inout [Command]) {
        guard var primary = streams[id] else { return }
        primary.escalated = true
        streams[id] = primary
        for otherID in streams.ids where otherID != id {
            guard var other = streams[otherID], other.isLive, !other.isHook, let player = other.player,
                  affects(primary, other) else { continue }
            if other.pausedBy == .player {
                // Already paused by us for a shorter interruption: now it stays paused. Its effect is
                // left in the record, so that reconciling gives back any duck it carried from before
                // the pause (the user presses play into their own volume, not a duck that is over).
                other.pausedBy = nil
                other.playing = false
                streams[otherID] = other
                out.append(.decision(decision(other, reason: "\(describe(primary)) took over",
                                              action: "stays paused (not resumed)", outcome: .paused)))
            } else if other.playing {
                other.playing = false
                streams[otherID] = other
                out.append(.pause(otherID, player))
                out.append(.decision(decision(other, reason: "\(describe(primary)) took over",
                                              action: "paused indefinitely", outcome: .paused)))
            }
        }
        if primary.audibility.heard, !primary.isHook || primary.player != nil || !primary.properties.isEmpty {
            nowPlaying.take(app: primary.app, stream: id, player: primary.player)
        }
    }

    // MARK: - Demands

    /// Whether a stream (live or lingering in its hold) currently acts on others.
    private func isInterrupting(_ stream: TrackedStream, now: Milliseconds) -> Bool {
        // Created corked and never played: not a sound yet (PulseAudio's role-cork ignores corked triggers
        // too). A call stream a softphone opens before the call must not pause the music.
        guard stream.hasPlayed else { return false }
        // Held muted since its output went away: not heard, until the user acts.
        if stream.outputLoss?.phase == .held { return false }
        // Silent for its class's release-after (and hold): it is over until it sounds again.
        if let released = stream.silenceEndsInterruption, now >= released { return false }
        // A capture's interruption whose app plays too: a call, not someone listening.
        if isListeningWhilePlaying(stream) { return false }
        switch stream.interruptionClass.kind {
        case .mix, .ambient: return false
        // Corked again after it played, or not: a prompt that stopped interrupting whenever its stream is
        // corked for an instant would resume, then pause again, a spoken player over MPRIS (a race the
        // player can lose). An idle prompt is released by its silence.
        case .short, .call: return true
        case .primary:
            // Before its grace ends it ducks; after, it mutes the player-less streams it outranks.
            return stream.playing || stream.endedAt != nil || stream.isHook
        }
    }

    /// Whether `interrupter` acts on `target`: by the policy's ranks, never within one app, and
    /// within one class only on streams that were active before it.
    func affects(_ interrupter: TrackedStream, _ target: TrackedStream) -> Bool {
        // The class test first: it settles most pairs without comparing strings.
        guard policy.interrupts(interrupter.interruptionClass, target.interruptionClass),
              interrupter.id != target.id, interrupter.app != target.app else { return false }
        if interrupter.interruptionClass.name == target.interruptionClass.name {
            return interrupter.activation > target.activation
        }
        return true
    }

    /// The strictest effect the interruptions in force ask of `stream`, and the class that asks it.
    private func demand(on stream: TrackedStream, from interrupters: [TrackedStream], into demand: inout Demand) {
        for interrupter in interrupters where affects(interrupter, stream) {
            let cls = interrupter.interruptionClass
            let asked: Effect
            switch cls.kind {
            case .mix, .ambient:
                continue
            case .call:
                asked = .pause
            case .short:
                asked = stream.classification.spoken ? .pause : .duck(cls.duck.linear)
            case .primary:
                if !interrupter.escalated {
                    asked = stream.classification.spoken ? .pause : .duck(cls.duck.linear)
                } else if stream.player == nil {
                    asked = .pause // mute fallback, for as long as the primary lasts
                } else {
                    continue // its player was paused once, for good, at escalation
                }
            }
            demand.add(asked, from: cls)
        }
    }

    // MARK: - Transitions

    private mutating func apply(_ demand: Demand, at position: Int, now: Milliseconds, into out: inout [Command]) {
        var stream = streams[position: position]
        let id = stream.id
        var wanted = demand.effect
        let source = demand.source
        // The user's own actions win for as long as the interruptions that provoked them last.
        if demand.effect != .pause { stream.userOwnsPlayback = false }
        if wanted == .pause, stream.userOwnsPlayback { wanted = .none }
        if case .duck = wanted, stream.userOwnsVolume { wanted = .none }
        if demand.effect == .none { stream.userOwnsVolume = false }
        // Leave alone what is paused by someone else; it is acted on when it plays again. What the user
        // muted is silent already: the mute fallback would only unmute it later.
        if !stream.playing, stream.pausedBy == nil { wanted = .none }
        if stream.userMuted, stream.pausedBy == nil, wanted == .pause { wanted = .none }
        guard wanted != stream.effect else {
            streams[position: position] = stream
            return
        }
        let current = stream.ramp.value(at: now)
        let reason = wanted == .none && stream.duckedByFocus ? "its app's window has focus, or focus no longer applies"
            : demand.why
        // A stream that starts sounding under an interruption (a new stream of a ducked app, a prompt's
        // victim that was just created or uncorked) gets its effect at once: ramping down from full
        // volume would be a blip of exactly what the policy means to hold down.
        let instant = stream.audibility.soundStartedAt == now && stream.effect == .none
            && stream.pausedBy == nil && current == 1
        let muteFade = instant ? 0 : policy.muteFade
        switch wanted {
        case .pause:
            if let player = stream.player {
                stream.pausedBy = .player
                stream.pauseAskedAt = now
                out.append(.pause(id, player))
                out.append(.decision(decision(stream, reason: reason, action: "paused (to be resumed)", outcome: .paused)))
            } else {
                stream.pausedBy = .mute
                stream.ramp = Ramp(from: current, to: 0, start: now, duration: muteFade)
                out.append(.mute(id, from: current, fade: muteFade))
                out.append(.decision(decision(stream, reason: reason + "; no player",
                                              action: "faded out and muted (to be unmuted)", outcome: .muted)))
            }
        case .none, .duck:
            let target = wanted.factor
            if case .duck = wanted, let source { stream.duckClass = source }
            let duckClass = stream.duckClass ?? source
            if stream.pausedBy == .mute {
                stream.restart(at: now)
                let resumed = stream.pausedLateByPlayer ? stream.player : nil
                if let resumed {
                    out.append(.resume(id, resumed))
                    stream.playing = true
                }
                stream.ramp = Ramp(from: 0, to: target, start: now, duration: policy.muteFade)
                out.append(.unmute(id, to: target, fade: policy.muteFade))
                out.append(.decision(decision(stream, reason: reason,
                                              action: resumed == nil ? "unmuted, fading in" : "resumed, unmuted, fading in")))
            } else {
                if stream.pausedBy == .player, let player = stream.player {
                    out.append(.resume(id, player))
                    stream.playing = true
                    stream.restart(at: now)
                    out.append(.decision(decision(stream, reason: reason, action: "resumed")))
                }
                if target != current || stream.ramp.to != target {
                    // A ramp still heading elsewhere is replaced even when it has not moved yet (a
                    // stream created corked ducks the others for one instant): left in place, it
                    // would carry on to the duck level after the interruption is over.
                    let duration = target == current || instant ? 0
                        : target < current ? (duckClass?.duckRamp ?? 500) : (duckClass?.restoreRamp ?? 1000)
                    stream.ramp = Ramp(from: current, to: target, start: now, duration: duration)
                    out.append(.ramp(id, from: current, to: target, duration: duration))
                    let action = target < 1
                        ? "ducked to \(Level(linear: target)) " + (instant ? "as it started" : "over \(duration) ms")
                        : duration == 0 ? "restored (its duck had not begun)" : "restored over \(duration) ms"
                    out.append(.decision(decision(stream, reason: reason, action: action,
                                                  outcome: target < 1 ? .ducked : nil)))
                }
            }
            stream.pausedBy = nil
            if wanted == .none { stream.duckClass = nil }
        }
        stream.duckedByFocus = wanted != .none && demand.byFocus
        stream.effect = wanted
        streams[position: position] = stream
    }

    func describe(_ stream: TrackedStream) -> String {
        "\(stream.applicationName) (\(stream.interruptionClass.name))"
    }
}
