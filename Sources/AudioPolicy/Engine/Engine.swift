/// The policy engine: the only place that decides what happens to streams.
///
/// A pure, deterministic state machine. Feed it ``Event``s with the time they happened; it returns the
/// ``Command``s to carry out. It does no I/O and reads no clock. When ``nextDeadline`` is set, call
/// ``handle(_:at:)`` with ``Event/tick`` at that time (grace times and holds end then).
public struct Engine: Sendable {
    public private(set) var policy: Policy
    /// In the order they started, so every decision comes out in the same order.
    var streams = StreamTable()
    /// Recently ended streams, for `state = "ended"`; bounded so a long-lived daemon doesn't grow.
    var ended: [StreamID] = []
    var nowPlaying = NowPlaying()
    var lastOwner: StreamID?
    var activations = 0
    /// The latest `now` handled: deadlines already reached are not reported again.
    var lastReconcile: Milliseconds = .min
    /// Streams the shell measures (``Command/measure(_:_:)``), so only changes are asked for.
    var measured: Set<StreamID> = []
    /// Live capture streams (microphones), by the app they belong to.
    var captures: [StreamID: Capture] = [:]
    /// The outputs (sinks) present, as last described.
    var outputs: [OutputID: Output] = [:]
    /// What the focus source said: which app's window has focus, which apps have windows.
    var windowFocus = WindowFocus()
    /// What each player last said of itself (``Event/playerStatus(_:_:)``); a player never told of is absent.
    var playerStatuses: [PlayerID: PlayerStatus] = [:]
    /// Hooks' interruptions that wait for a call to end.
    var callWait = CallWait()
    /// After ``Event/stop(fade:)``: streams are followed, no longer changed.
    public private(set) var isStopped = false

    static let endedMemory = 256
    /// A stream that plays again this soon after it stopped (an underrun's cork) was never stopped.
    public static let glitch: Milliseconds = 250
    /// A stream that plays again this soon after a stop of its own while its player said Playing
    /// throughout (``TrackedStream/stoppedUnderPlayingPlayer``) was never stopped either: under load mpv's
    /// underrun restarts were seen to take longer than ``glitch``, and the uncork that ended one made its
    /// music newer than a browser's song that had started meanwhile, which it then paused. Longer, a
    /// stream's stop is taken for its user's (a player that pauses by corking, and says nothing).
    public static let streamFlicker: Milliseconds = 2000
    /// How long after a stream starts playing its player may still say Playing and make it media.
    /// Browsers register their page's player, and say Playing, up to a second either side of the stream
    /// (REAL-APPS.md) on an idle machine, but Firefox took over 3 s in a loaded CI run (its `<audio>`
    /// stream stayed ambient under a 3 s window); a player that says Playing much later is playing
    /// something else (another tab's song, seconds after a web game began).
    public static let playerWindow: Milliseconds = 8000

    public init(policy: Policy) {
        self.policy = policy
    }

    // MARK: - Events

    /// Applies one event at time `now` and returns what to do, in order.
    public mutating func handle(_ event: Event, at now: Milliseconds) -> [Command] {
        lastReconcile = max(lastReconcile, now)
        var out: [Command] = []
        switch event {
        case let .stop(fade):
            return releaseAll(at: now, fade: fade)
        case let .streamStarted(id, properties, player, playing, muted, held, output):
            start(id, properties: properties, player: player, hook: nil, playing: playing, muted: muted,
                  now: now, into: &out)
            if held, !muted { holdRecovered(id, now: now, into: &out) }
            if let output { streamMoved(id, to: output, now: now, into: &out) }
        case let .interruptionBegan(token, className, properties):
            beginInterruption(token, className: className, properties: properties, now: now, into: &out)
        case let .interruptionAfterCall(token, className, properties):
            awaitCall(CallWait.Request(token: token, className: className, properties: properties), now: now, into: &out)
        case let .streamChanged(id, properties):
            guard var stream = streams[id], stream.isLive else { break }
            stream.properties = properties
            if !stream.isHook { reclassify(&stream, because: "its properties changed", now: now, into: &out) }
            streams[id] = stream
        case let .audibility(id, audible):
            guard var stream = streams[id], stream.isLive, !stream.isHook else { break }
            let was = stream.audibility.audible
            guard stream.audibility.measured(audible: audible, at: now) else { break }
            streams[id] = stream
            if was != audible {
                out.append(.decision(decision(stream, reason: "its monitor", action: audible ? "audible" : "silent",
                                              kind: .measured)))
            }
        case let .measuring(id):
            guard var stream = streams[id], stream.isLive, !stream.isHook else { break }
            stream.audibility.meterStarted(at: now)
            streams[id] = stream
        case let .capture(id, properties, monitor, corked):
            let records = Capture.records(properties, monitor: monitor, corked: corked)
            if records, captures[id] == nil {
                startRecording(id, properties, now: now, into: &out)
            } else if !records, captures[id] != nil {
                stopRecording(id, because: monitor ? "it records what plays" : corked ? "its app corked it" : "it is a meter",
                              now: now, into: &out)
            }
        case let .captureEnded(id):
            if captures[id] != nil { stopRecording(id, because: "it ended", now: now, into: &out) }
        case let .playerGone(player):
            playerStatuses[player] = nil
            playerGone(player, now: now, into: &out)
        case let .playerStatus(player, status):
            playerSaid(status, player: player, now: now, into: &out)
        case let .playerChanged(id, player):
            guard var stream = streams[id], stream.isLive, !stream.isHook else { break }
            setPlayer(player, of: &stream, now: now, into: &out)
            streams[id] = stream
        case let .pauseIgnored(id):
            pauseIgnored(id, now: now, into: &out)
        case let .nowPlayingClaimed(token, properties, player):
            nowPlaying.take(app: TrackedStream.app(of: token, properties, player), stream: token, player: player)
        case let .interruptionEnded(id):
            if callWait.withdraw(id) {
                out.append(.decision(Decision(stream: id, application: id.rawValue, className: "",
                                              reason: "its hook withdrew it", action: "no longer waits for the call")))
            } else {
                end(id, now: now, into: &out)
            }
        case let .startedAtOurSave(id, levelAway, mutedByUs):
            putBackSavedStart(id, levelAway: levelAway, mutedByUs: mutedByUs, now: now, into: &out)
        case let .levelTold(id, muted):
            restateLevel(id, arrivedMuted: muted, now: now, into: &out)
        case let .streamEnded(id):
            end(id, now: now, into: &out)
        case let .userVolume(id, _, overtakes):
            userChangedVolume(id, overtakesOurWrite: overtakes, now: now, into: &out)
        case let .userMute(id, muted):
            userChangedMute(id, muted: muted, now: now, into: &out)
        case let .playback(id, playing):
            playbackReported(id, playing: playing, now: now, into: &out)
        case let .output(id, output):
            outputUpdated(id, output, now: now, into: &out)
        case let .outputRemoved(id):
            outputRemoved(id, now: now, into: &out)
        case let .streamMoved(id, output):
            streamMoved(id, to: output, now: now, into: &out)
        case .focus, .windowClosed, .focusUnknown:
            focusChanged(event)
        case let .lastWindowClosed(app):
            focusChanged(.windowClosed(app))
            lastWindowClosed(app, now: now, into: &out)
        case .serverGone:
            forgetEndedStreams()
        case let .policyReplaced(policy):
            adopt(policy, now: now, into: &out)
        case .tick:
            break
        }
        // Stopped: what happens is followed, but no stream is changed again (see ``Event/stop(fade:)``).
        guard !isStopped else {
            return out.filter {
                switch $0 {
                // A level its user set is its own even while stopping: the stop's fade-in must not undo it.
                // So is a start at one of our saved levels: put back, not changed.
                case .repairSaved, .decision, .yieldVolume, .adoptLevel, .rewriteLevel, .putBack: true
                default: false
                }
            }
        }
        beginAfterCall(now: now, into: &out)
        confirmPauses(now: now, into: &out)
        settleOutputLosses(now: now, into: &out)
        reconcile(now: now, into: &out)
        return out
    }

    /// Swaps in a new policy (``Event/policyReplaced(_:)``): every stream is classified anew and the
    /// effects follow. A stopped engine only keeps it.
    private mutating func adopt(_ policy: Policy, now: Milliseconds, into out: inout [Command]) {
        self.policy = policy
        guard !isStopped else { return }
        for id in streams.ids {
            guard var stream = streams[id] else { continue }
            if stream.isHook {
                if captures[id] != nil { continue } // classified anew from its rules below
                if let cls = policy.interruptionClass(named: stream.interruptionClass.name) {
                    stream.classification.interruptionClass = cls
                }
            } else {
                reclassify(&stream, because: "the policy was reloaded", now: now, into: &out)
            }
            streams[id] = stream
        }
        for id in captures.keys.sorted(by: { $0.rawValue < $1.rawValue }) { listen(id, now: now, into: &out) }
    }

    /// Undoes everything the policy did, for a clean stop: ducks ramp back over `fade` ms, muted
    /// streams are unmuted. Players the engine paused stay paused (resuming them over a call would be
    /// worse than a paused player), and nothing new is decided.
    private mutating func releaseAll(at now: Milliseconds, fade: Milliseconds) -> [Command] {
        isStopped = true
        var out: [Command] = []
        for id in streams.ids {
            guard var stream = streams[id], stream.isLive, !stream.isHook else { continue }
            let current = stream.ramp.value(at: now)
            if stream.policyMutes {
                out.append(.unmute(id, to: 1, fade: fade))
            } else if current != 1 || !stream.ramp.isSteady {
                out.append(.ramp(id, from: current, to: 1, duration: fade))
            }
            let muted = stream.policyMutes
            stream.ramp = Ramp(from: muted ? 0 : current, to: 1, start: now, duration: fade)
            stream.pausedBy = nil
            stream.outputLoss = nil
            stream.effect = .none
            streams[id] = stream
        }
        return out
    }

    // MARK: - Queries

    /// When the engine next needs a ``Event/tick`` (a grace time, a hold or a player's time to confirm
    /// Pause ends), if ever.
    public var nextDeadline: Milliseconds? {
        guard !isStopped else { return nil }
        return streams.earliest { stream in deadline(of: stream) }
    }

    /// ``nextDeadline`` from a scan of every stream, not only those that may be due: the engine's
    /// property run checks that the two agree.
    var nextDeadlineOfEveryStream: Milliseconds? {
        guard !isStopped else { return nil }
        return streams.values.compactMap { deadline(of: $0) }.min()
    }

    /// The first moment something is due for one stream, if ever: its hold's end once ended, its grace's
    /// end, its output loss's switch window, its player's time to confirm Pause, or its silence ending
    /// what it interrupts.
    private func deadline(of stream: borrowing TrackedStream) -> Milliseconds? {
        var next: Milliseconds?
        func consider(_ due: Milliseconds?) {
            if let due, next.map({ due < $0 }) ?? true { next = due }
        }
        if let endedAt = stream.endedAt {
            consider(endedAt + stream.interruptionClass.hold)
        } else if stream.interruptionClass.kind == .primary, !stream.escalated, stream.playing,
                  stream.pausedBy == nil {
            consider(stream.graceEnds)
        }
        guard stream.isLive else { return next }
        if let loss = stream.outputLoss, loss.phase == .waiting {
            consider(loss.since + policy.outputs.switchWindow)
        }
        consider(stream.pauseTimesOut(after: policy.pauseTimeout))
        // A silent stream stops interrupting; past that moment nothing more is due for it.
        if stream.playing, let released = stream.silenceEndsInterruption, released > lastReconcile {
            consider(released)
        }
        return next
    }

    /// Drops Now Playing owners that can no longer hold it: the app passed back to when the owner left
    /// may meanwhile have become a call or a prompt, or been found never heard; a hook's interruption
    /// began again under a class that is not primary (a hook that waited for a call as music, then as
    /// speech). A hook is never measured, so only its class counts.
    mutating func checkNowPlaying() {
        while let owner = nowPlaying.owner, let stream = streams[owner],
              stream.interruptionClass.kind != .primary || (!stream.isHook && !stream.audibility.heard) {
            nowPlaying.remove(stream: owner)
        }
    }

    /// The stream standing for the Now Playing owner, if any.
    public var nowPlayingOwner: StreamID? { nowPlaying.owner }

    /// A stream's state at `now` (`ended` for a stream that ended recently; nil if never seen). A hook's
    /// interruption is `waiting` while it waits for a call to end, `playing` once it began.
    public func state(of id: StreamID, at now: Milliseconds) -> StreamState? {
        if let stream = streams[id] {
            if !stream.isHook { return stream.state(at: now) }
            if stream.isLive { return .playing }
        }
        if callWait.waiting.contains(where: { $0.token == id }) { return .waiting }
        return ended.contains(id) ? .ended : nil
    }

    /// The policy factor on a stream's volume at `now` (1 = the user's own volume).
    public func factor(of id: StreamID, at now: Milliseconds) -> Double? {
        guard let stream = streams[id], stream.isLive else { return ended.contains(id) ? 1 : nil }
        return stream.ramp.value(at: now)
    }

    /// Whether the mute fallback holds the stream muted.
    public func isMuted(_ id: StreamID) -> Bool {
        streams[id]?.policyMutes == true
    }

    /// Why the loss of its output holds the stream muted or paused (`headset "WH-1000XM4" went away`), nil
    /// when nothing does.
    public func outputLossReason(of id: StreamID) -> String? {
        guard let stream = streams[id], stream.isLive, let loss = stream.outputLoss else { return nil }
        return loss.reason
    }

    /// Every live stream (hooks' interruptions included), in the order they started, then the hooks'
    /// requests that wait for the call to end, in the order they came.
    public func snapshot(at now: Milliseconds) -> [StreamStatus] {
        streams.values.compactMap { stream in
            guard stream.isLive else { return nil }
            var status = StreamStatus(stream, at: now)
            status.measured = measured.contains(stream.id)
            status.isCapture = stream.isHook && captures[stream.id] != nil
            status.isHeldOff = isListeningWhilePlaying(stream)
            return status
        } + callWait.waiting.map { StreamStatus(waiting: $0, at: now) }
    }

    // MARK: - Event handling

    /// A hook's interruption begins.
    mutating func beginInterruption(_ token: StreamID, className: String, properties: Properties, now: Milliseconds,
                                    into out: inout [Command]) {
        let cls = policy.interruptionClass(named: className) ?? InterruptionClass(name: className, kind: .short)
        start(token, properties: properties, player: nil,
              hook: Classification(interruptionClass: cls, spoken: false, rule: nil), playing: true, muted: false,
              now: now, into: &out)
    }

    /// Starts tracking a stream, or an interruption with no stream of its own (`hook`: its class, from a
    /// hook's request or a capture's rule).
    mutating func start(_ id: StreamID, properties: Properties, player: PlayerID?, hook: Classification?,
                        playing: Bool, muted: Bool, now: Milliseconds, into out: inout [Command]) {
        if streams[id] != nil { end(id, now: now, into: &out) }
        drop(id)
        let classification = hook ?? classify(properties, app: TrackedStream.app(of: id, properties, player),
                                              player: player.flatMap { makesMedia($0) ? $0 : nil })
        activations += 1
        var stream = TrackedStream(id: id, properties: properties, player: player, classification: classification,
                                   isHook: hook != nil, startedAt: now, activation: activations)
        stream.playerCounts = hook == nil && player.map(makesMedia) == true
        // Created corked: it is not sound yet, and interrupts nothing until it first plays.
        stream.playing = playing
        stream.hasPlayed = playing
        stream.userMuted = muted
        // A hook asks explicitly: no grace for it.
        if stream.isHook, classification.interruptionClass.kind == .primary { stream.escalated = true }
        streams[id] = stream
        if !stream.isHook, classification.interruptionClass.kind == .primary {
            nowPlaying.follow(app: stream.app, stream: id)
        }
        let action = !stream.isHook ? "started"
            : captures[id] != nil ? "listens: interrupts while it records and its app plays nothing"
            : "interruption began"
        out.append(.decision(decision(stream, reason: classification.reason, action: action, kind: .classified)))
        if stream.escalated { escalate(id, now: now, into: &out) }
    }

    mutating func end(_ id: StreamID, now: Milliseconds, into out: inout [Command]) {
        guard var stream = streams[id], stream.isLive else { return }
        if !stream.isHook, stream.isAltered(at: now) {
            out.append(.repairSaved(id))
            out.append(.decision(decision(stream, reason: "ended while changed by the policy",
                                          action: "repair its saved volume")))
        }
        stream.endedAt = now
        stream.outputLoss = nil
        stream.pausedBy = nil
        stream.effect = .none
        streams[id] = stream
        if !stream.isHook {
            ended.append(id)
            if ended.count > Self.endedMemory { ended.removeFirst(ended.count - Self.endedMemory) }
        }
        let app = stream.app
        let appStillHere = stream.player != nil
            || streams.values.contains { $0.isLive && !$0.isHook && $0.app == app }
        if !appStillHere, nowPlaying.contains(app: app) { nowPlaying.remove(app: app) }
        // A stream that interrupts nobody needn't linger.
        if stream.interruptionClass.kind == .mix || stream.interruptionClass.kind == .ambient || !stream.hasPlayed {
            drop(id)
        }
    }

    /// Its user's level is the stream's own, adopted or yielded to; written once more when a write of ours
    /// on its way would land over it (``Command/rewriteLevel(_:)``).
    private mutating func userChangedVolume(_ id: StreamID, overtakesOurWrite: Bool, now: Milliseconds,
                                            into out: inout [Command]) {
        guard var stream = streams[id], stream.isLive, !stream.isHook else { return }
        let dealt = outputLossTouched(&stream, volume: true, muted: nil, now: now, into: &out)
        streams[id] = stream
        if dealt { return }
        let current = stream.ramp.value(at: now)
        guard current != 1 || !stream.ramp.isSteady || stream.effect != .none else {
            // Untouched by the policy: the level its user set is its own from now on, which the next duck
            // scales and its end gives back; nothing to cancel, nothing to tell.
            out.append(.adoptLevel(id))
            if overtakesOurWrite { rewriteLevel(stream, into: &out) }
            return
        }
        stream.userOwnsVolume = true
        if stream.effect != .pause { stream.effect = .none }
        // The shell puts the user's new volume in place at factor 1 (``Command/yieldVolume(_:)``), even
        // under the mute fallback: only the mute remains, and unmuting must not dip from 0.
        stream.ramp = .steady(1)
        streams[id] = stream
        out.append(.yieldVolume(id))
        out.append(.decision(decision(stream, reason: "the user changed its volume", action: "duck cancelled")))
        if overtakesOurWrite { rewriteLevel(stream, into: &out) }
    }

    /// ``Command/rewriteLevel(_:)``, with the decision that explains it.
    private func rewriteLevel(_ stream: TrackedStream, into out: inout [Command]) {
        out.append(.rewriteLevel(stream.id))
        out.append(.decision(decision(stream, reason: "a volume write of ours lands after its user's change",
                                      action: "its user's level written again")))
    }

    private mutating func userChangedMute(_ id: StreamID, muted: Bool, now: Milliseconds,
                                          into out: inout [Command]) {
        guard var stream = streams[id], stream.isLive else { return }
        let dealt = outputLossTouched(&stream, volume: false, muted: muted, now: now, into: &out)
        streams[id] = stream
        if dealt { return }
        stream.userMuted = muted
        if muted, stream.pausedBy == .mute {
            // The user muted what the mute fallback holds (during its fade, say): the mute is theirs now,
            // never to be undone by the policy. Reconciling gives back the volume the fade took.
            stream.pausedBy = nil
        }
        streams[id] = stream
        guard !muted, stream.pausedBy == .mute else { return }
        // The user unmuted what the policy muted: it's theirs again. Bring its volume back, or they'd
        // unmute into the silence the fade left.
        stream.pausedBy = nil
        stream.effect = .none
        stream.userOwnsPlayback = true
        let current = stream.ramp.value(at: now)
        stream.ramp = Ramp(from: current, to: 1, start: now, duration: policy.muteFade)
        streams[id] = stream
        out.append(.ramp(id, from: current, to: 1, duration: policy.muteFade))
        out.append(.decision(decision(stream, reason: "the user unmuted it", action: "pause cancelled")))
    }

    private mutating func playbackReported(_ id: StreamID, playing: Bool, now: Milliseconds,
                                           into out: inout [Command]) {
        guard var stream = streams[id], stream.isLive, !stream.isHook else { return }
        if playing, !stream.playing, stream.pausedBy == nil || stream.pausedBy == .mute, stream.hasPlayed,
           let stopped = stream.stoppedAt,
           now - stopped < Self.glitch || stream.stoppedUnderPlayingPlayer && now - stopped < Self.streamFlicker {
            // Corked for an instant (mpv restarts its audio after an underrun, 13-35 ms; pipewire-pulse's
            // rescue move unlinks a stream off a lost output for a few ms): the same sound going on, not
            // the user starting it again — it must not become newer than media that started meanwhile,
            // take Now Playing back, cancel the fallback's mute, or end a held output loss. Nor is the
            // stop the Pause obeyed late: a Paused after it, within the fallback's window, still is.
            stream.playing = true
            stream.stoppedAt = nil
            stream.stoppedUnderPlayingPlayer = false
            stream.pausedLateByPlayer = false
            streams[id] = stream
            return
        }
        // Playing after the fallback took over: a Paused after that is not the engine's Pause obeyed late.
        if playing { stream.pausedLateByPlayer = false; stream.fallbackAt = nil }
        outputLossPlayback(&stream, playing: playing, now: now, into: &out)
        let wasPlaying = stream.playing
        let ownPause = stream.pausedBy == nil || stream.pausedBy == .mute
        stream.stoppedAt = playing ? nil : wasPlaying && ownPause ? now : stream.stoppedAt
        if playing || wasPlaying && ownPause {
            stream.stoppedUnderPlayingPlayer = !playing && stream.player.map { playerStatuses[$0] == .playing } == true
        }
        stream.playing = playing
        if !playing { stream.pauseAskedAt = nil }
        if !playing, wasPlaying, stream.pausedBy == .mute, stream.player != nil, let fallback = stream.fallbackAt,
           now - fallback <= policy.pauseTimeout {
            // The Pause obeyed after the mute fallback took over: the engine paused it after all.
            stream.pausedLateByPlayer = true
            out.append(.decision(decision(stream, reason: "its player said Paused after the mute fallback took over",
                                          action: "paused by its player after all (to be resumed and unmuted)")))
        }
        // A player saying Playing is primary audio the user chose: it owns Now Playing at once, so media
        // keys pressed in a song's first seconds reach it. (The grace guards the owner against streams
        // that say nothing of themselves: no player, no role.)
        if playing, stream.player != nil, stream.interruptionClass.kind == .primary, stream.audibility.heard {
            nowPlaying.take(app: stream.app, stream: id, player: stream.player)
        }
        // The user pressing play wins over the interruptions in force, whoever paused the player.
        if playing, !wasPlaying { stream.userOwnsPlayback = true }
        if playing, stream.pausedBy == .player {
            // Playing again while the engine holds it paused: the user (or a player that ignored
            // Pause) overrode us. The user wins until this interruption is over. The effect stays on
            // record, so reconciling gives back a duck the stream carried into the pause.
            stream.pausedBy = nil
            stream.userOwnsPlayback = true
            streams[id] = stream
            out.append(.decision(decision(stream, reason: "played by the user", action: "pause cancelled")))
            return
        }
        streams[id] = stream
        if playing, !wasPlaying {
            stream.hasPlayed = true
            // Playing again is a new sound: audible until measured otherwise, and what the policy does
            // to its app applies at once.
            stream.restart(at: now)
            if stream.interruptionClass.kind == .primary {
                // Playing again counts as starting again: after the grace time it takes Now Playing and
                // pauses the others (apps that uncork for every chat beep must not pause your music).
                activations += 1
                stream.activation = activations
                stream.escalated = false
            }
            streams[id] = stream
        }
    }

    /// Classifies a live stream anew from what is known of it now; a change of class is a decision of its
    /// own (`explain`, `monitor` and the timelines show why a game's stream became media, say). Becoming
    /// primary counts as starting: the grace runs from now.
    mutating func reclassify(_ stream: inout TrackedStream, because reason: String, now: Milliseconds,
                             into out: inout [Command]) {
        let classification = classify(stream.properties, app: stream.app, player: stream.countedPlayer)
        guard classification != stream.classification else { return }
        let was = stream.interruptionClass
        stream.classification = classification
        if classification.interruptionClass.kind == .primary, was.kind != .primary {
            activations += 1
            stream.activation = activations
            stream.startedAt = now
            stream.audibility.restartGrace(at: now)
            stream.escalated = false
        }
        guard classification.interruptionClass.name != was.name else { return }
        out.append(.decision(decision(stream, reason: reason,
                                      action: "class \(was.name) → \(classification.interruptionClass.name) by "
                                          + classification.reason,
                                      kind: .reclassified)))
    }

    /// The class of a stream with these properties, with the pseudo-properties `recording` (`yes` while its
    /// app records from a microphone) and `player` (the name of its controllable media player, absent
    /// without one: having a player is what makes an app's long sound media rather than a game's).
    func classify(_ properties: Properties, app: String, player: PlayerID?) -> Classification {
        var properties = properties
        properties["recording"] = captures.values.contains { $0.app == app } ? "yes" : "no"
        properties[Rule.captureKey] = "no"
        if let player { properties["player"] = player.rawValue }
        return policy.classify(properties)
    }

    /// An app started or stopped recording: its live streams are classified anew.
    /// An app began recording from a microphone (``Capture/records(_:monitor:corked:)``): its playback is
    /// classified anew, and the recording may interrupt (apps that listen).
    private mutating func startRecording(_ id: StreamID, _ properties: Properties, now: Milliseconds,
                                         into out: inout [Command]) {
        let app = TrackedStream.app(of: id, properties, nil)
        captures[id] = Capture(app: app, properties: properties)
        out.append(.decision(Decision(stream: id, application: properties["application.name"] ?? app, className: "capture",
                                      reason: "an uncorked capture of an input, no meter",
                                      action: "recording from a microphone", kind: .measured)))
        reclassifyApp(app, recording: true, now: now, into: &out)
        listen(id, now: now, into: &out)
    }

    /// The app stopped recording (its capture ended, was corked or moved to a monitor).
    private mutating func stopRecording(_ id: StreamID, because reason: String, now: Milliseconds,
                                        into out: inout [Command]) {
        guard let capture = captures.removeValue(forKey: id) else { return }
        out.append(.decision(Decision(stream: id, application: capture.properties["application.name"] ?? capture.app,
                                      className: "capture", reason: reason, action: "no longer recording",
                                      kind: .measured)))
        reclassifyApp(capture.app, recording: false, now: now, into: &out)
        stopListening(id, now: now, into: &out)
    }

    private mutating func reclassifyApp(_ app: String, recording: Bool, now: Milliseconds,
                                        into out: inout [Command]) {
        for id in streams.ids {
            guard var stream = streams[id], stream.isLive, !stream.isHook, stream.app == app else { continue }
            reclassify(&stream, because: recording ? "its app records from a microphone" : "its app stopped recording",
                       now: now, into: &out)
            streams[id] = stream
        }
    }

    /// The stream's player is now `player` (nil: none any more). A player that came late makes the stream
    /// media (primary) from now on; one that went away makes it ambient again (by the default policy).
    private mutating func setPlayer(_ player: PlayerID?, of stream: inout TrackedStream, now: Milliseconds,
                                    into out: inout [Command]) {
        guard player != stream.player else { return }
        if player == nil, stream.pausedBy == .player { stream.losePlayerPause() }
        stream.player = player
        // A player told of counts only within the window: one that appears later plays something else.
        stream.playerCounts = player.map { player in
            makesMedia(player) && (playerStatuses[player] == nil || now - stream.startedAt <= Self.playerWindow)
        } ?? false
        let reason = player.map { "its player \($0.rawValue) appeared"
            + (stream.playerCounts ? "" : ", saying it plays nothing (\(playerStatuses[$0]?.rawValue ?? "?"))") }
        reclassify(&stream, because: reason ?? "its player went away", now: now, into: &out)
    }

    /// Whether `player` makes its streams media as far as it has said: it says it plays, or it was never
    /// told of (``Event/playerStatus(_:_:)``).
    func makesMedia(_ player: PlayerID) -> Bool {
        playerStatuses[player].map { $0 == .playing } ?? true
    }

    /// A player said what it does: saying Playing, it makes media of its streams that started playing
    /// within ``playerWindow``; anything else changes no stream (a stream that was media stays so when
    /// its player pauses).
    private mutating func playerSaid(_ status: PlayerStatus, player: PlayerID, now: Milliseconds,
                                     into out: inout [Command]) {
        playerStatuses[player] = status
        guard status == .playing else {
            // Its player said it stopped: a stop of its streams is its player's, not theirs alone.
            for id in streams.ids where streams[id]?.player == player && streams[id]?.stoppedUnderPlayingPlayer == true {
                streams[id]?.stoppedUnderPlayingPlayer = false
            }
            return
        }
        for id in streams.ids {
            guard var stream = streams[id], stream.isLive, !stream.isHook, stream.player == player,
                  !stream.playerCounts, now - stream.startedAt <= Self.playerWindow else { continue }
            stream.playerCounts = true
            reclassify(&stream, because: "its player \(player.rawValue) says Playing", now: now, into: &out)
            streams[id] = stream
        }
    }

    mutating func pauseIgnored(_ id: StreamID, now: Milliseconds, reason: String = "its player ignored Pause",
                               into out: inout [Command]) {
        guard var stream = streams[id], stream.isLive, stream.pausedBy == .player else { return }
        stream.pauseAskedAt = nil
        if stream.userMuted {
            // The user muted it meanwhile: silent already, and a mute fallback would unmute it later.
            stream.pausedBy = nil
            stream.playing = true
            streams[id] = stream
            return
        }
        let current = stream.ramp.value(at: now)
        stream.pausedBy = .mute
        stream.fallbackAt = now
        stream.playing = true
        stream.ramp = Ramp(from: current, to: 0, start: now, duration: policy.muteFade)
        streams[id] = stream
        out.append(.mute(id, from: current, fade: policy.muteFade))
        out.append(.decision(decision(stream, reason: reason,
                                      action: "faded out and muted instead (to be unmuted)", outcome: .muted)))
    }

    private mutating func playerGone(_ player: PlayerID, now: Milliseconds, into out: inout [Command]) {
        for id in streams.ids {
            guard var stream = streams[id], stream.player == player else { continue }
            if stream.isLive, !stream.isHook {
                setPlayer(nil, of: &stream, now: now, into: &out)
            } else {
                stream.player = nil
            }
            streams[id] = stream
        }
        nowPlaying.remove(player: player)
    }

    func decision(_ stream: TrackedStream, reason: String, action: String, kind: Decision.Kind = .acted,
                  outcome: Decision.Outcome? = nil) -> Decision {
        Decision(stream: stream.id, application: stream.applicationName,
                 className: stream.interruptionClass.name, reason: reason, action: action, kind: kind,
                 outcome: outcome)
    }

    mutating func drop(_ id: StreamID) {
        streams[id] = nil
    }
}
