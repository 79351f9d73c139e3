/// What the loss of its output did to a stream, while that is in force.
///
/// The phases: `waiting` — muted at once, the policy's switch window running for the same device to come
/// back (a Bluetooth profile switch); `pausing` — the window passed, its player asked to pause, still
/// muted until it says Paused; `held` — muted until the user acts (no player, or the class says `mute`, or
/// its player ignored Pause); `paused` — its player paused and the stream unmuted, kept only for the
/// policy's `resume-when-back`.
struct OutputLoss: Hashable, Sendable {
    enum Phase: Hashable, Sendable { case waiting, pausing, held, paused }

    var phase: Phase
    var output: OutputID
    /// The lost output's device (``Output/device``): the same device appearing again is it coming back.
    var device: String?
    /// Why, for decisions: `headset "WH-1000XM4" went away`.
    var reason: String
    /// What its output's `label` was: `headset "WH-1000XM4"`.
    var label: String
    var since: Milliseconds
    var action: OutputLossAction
    /// A port's loss (a jack pulled): the port's name; its coming back undoes the loss.
    var port: String?
    /// The same device appeared during the window, and the stream has not been moved onto it yet.
    var deviceBack = false
    /// The user touched the stream since (volume, mute): it is never resumed.
    var touched = false
    /// Waiting, the stream already muted by the fallback of an interruption (``TrackedStream/pausedBy`` is
    /// `.mute`): that mute is left to the interruption if the device comes back, and becomes the loss's
    /// held mute if not.
    var fallbackMute = false

    /// Whether the engine holds the stream muted for it.
    var holdsMute: Bool { phase != .paused }
}

/// Output loss: the sink a stream is heard on goes away, or its active port is unplugged. The stream is
/// muted at once (the server has moved it, or is about to, to the speakers) and, once the switch window
/// passes without the same device coming back, paused for good through its player — or held muted until
/// the user acts when it has none. Not a loss: the same device back within the window (a profile switch),
/// the user's move, a stream not heard (paused, muted, silent), a class whose `on-output-loss` is
/// `nothing` (calls by default: they follow the server's move).
extension Engine {
    /// How long after a stream is moved off an output the removal of that output still counts as the
    /// server's rescue (the removal announced after the move), ms.
    public static let rescueLag: Milliseconds = 500

    // MARK: - Events

    mutating func outputUpdated(_ id: OutputID, _ output: Output, now: Milliseconds, into out: inout [Command]) {
        let before = outputs[id]
        outputs[id] = output
        if let before, before.portLost(to: output) {
            let port = before.port?.name ?? "?"
            lose(id, output: before, reason: "\(before.port?.isWorn == true ? "headphones" : "port \"\(port)\"") "
                    + "unplugged from \"\(before.name)\"", port: port, now: now, into: &out)
        }
        for sid in streams.ids {
            guard var stream = streams[sid], stream.isLive, var loss = stream.outputLoss else { continue }
            if let port = loss.port {
                guard loss.output == id, output.port?.name == port, output.port?.available != .no else { continue }
                outputBack(&stream, now: now, into: &out)
            } else if before == nil, let device = loss.device, output.device == device {
                if stream.output == id {
                    outputBack(&stream, now: now, into: &out)
                } else if loss.phase == .waiting {
                    loss.deviceBack = true
                    stream.outputLoss = loss
                } else {
                    continue
                }
            } else {
                continue
            }
            streams[sid] = stream
        }
    }

    mutating func outputRemoved(_ id: OutputID, now: Milliseconds, into out: inout [Command]) {
        guard let output = outputs.removeValue(forKey: id) else { return }
        lose(id, output: output, reason: "\(output.label) went away", port: nil, now: now, into: &out)
    }

    mutating func streamMoved(_ id: StreamID, to output: OutputID, now: Milliseconds, into out: inout [Command]) {
        guard var stream = streams[id], stream.isLive, !stream.isHook else { return }
        if let before = stream.output, before != output { stream.movedOff = (before, now) }
        stream.output = output
        if let loss = stream.outputLoss, loss.port == nil, let device = loss.device, outputs[output]?.device == device {
            outputBack(&stream, now: now, into: &out)
        }
        streams[id] = stream
    }

    // MARK: - Loss

    /// The output `id` is lost: every stream heard on it whose class acts on a loss is muted at once.
    private mutating func lose(_ id: OutputID, output: Output, reason: String, port: String?, now: Milliseconds,
                               into out: inout [Command]) {
        let window = policy.outputs.switchWindow
        for sid in streams.ids {
            guard var stream = streams[sid], stream.isLive, !stream.isHook, stream.outputLoss == nil else { continue }
            let movedOffIt = port == nil && stream.movedOff.map { $0.output == id && now - $0.at <= Self.rescueLag } == true
            guard stream.output == id || movedOffIt else { continue }
            let action = stream.interruptionClass.onOutputLoss
            let loss = OutputLoss(phase: .waiting, output: id, device: output.device, reason: reason, label: output.label,
                                  since: now, action: action, port: port)
            if action == .nothing {
                if isHeard(stream) {
                    out.append(.decision(decision(stream, reason: reason,
                                                  action: "follows the server to the new output (on-output-loss = nothing)")))
                }
                continue
            }
            if stream.pausedBy == .player {
                // Paused by us for a call, to be resumed when it ends: not on an output nobody chose.
                stream.pausedBy = nil
                stream.pauseAskedAt = nil
                stream.playing = false
                streams[sid] = stream
                out.append(.decision(decision(stream, reason: reason, action: "stays paused (not resumed)", outcome: .paused)))
                continue
            }
            if stream.pausedBy == .mute {
                // Muted by the fallback, to be unmuted when the interruption ends: unless the same device is
                // back within the window, it stays muted instead (see ``settleOutputLosses(now:into:)``).
                var waiting = loss
                waiting.fallbackMute = true
                stream.outputLoss = waiting
                streams[sid] = stream
                out.append(.decision(decision(stream, reason: reason,
                                              action: "stays muted (\(window) ms for it to come back)", outcome: .muted)))
                continue
            }
            guard isHeard(stream) else { continue }
            let current = stream.ramp.value(at: now)
            stream.ramp = Ramp(from: current, to: 0, start: now, duration: 0)
            stream.outputLoss = loss
            streams[sid] = stream
            out.append(.mute(sid, from: current, fade: 0))
            out.append(.decision(decision(stream, reason: reason,
                                          action: "muted at once (\(window) ms for it to come back)", outcome: .muted)))
        }
    }

    /// A new stream an earlier run held muted for a lost output (``Event/streamStarted(_:_:player:playing:muted:held:)``):
    /// held on until the user acts. Which output it lost is not known any more, so it never comes back
    /// by itself (no `resume-when-back`).
    mutating func holdRecovered(_ id: StreamID, now: Milliseconds, into out: inout [Command]) {
        guard var stream = streams[id], stream.isLive, !stream.isHook, !stream.userMuted else { return }
        let reason = "an earlier run held it muted: its output went away"
        stream.outputLoss = OutputLoss(phase: .held, output: stream.output ?? OutputID(""), device: nil, reason: reason,
                                       label: "its output", since: now, action: stream.interruptionClass.onOutputLoss,
                                       port: nil)
        stream.ramp = Ramp(from: 0, to: 0, start: now, duration: 0)
        streams[id] = stream
        out.append(.decision(decision(stream, reason: reason, action: "stays muted " + Self.untilTheUserActs,
                                      outcome: .muted)))
    }

    /// Heard on its output: playing, not paused or muted by anyone, not found silent.
    private func isHeard(_ stream: TrackedStream) -> Bool {
        stream.playing && stream.hasPlayed && stream.pausedBy == nil && !stream.userMuted && stream.audibility.audible
            && stream.effect != .pause
    }

    static let untilTheUserActs = "until the user unmutes it, plays it or changes its volume"

    /// The window has passed: a device back meanwhile undoes the mute (the stream stays where the server
    /// put it: the device or the user's default); otherwise the stream is paused for good, or held muted.
    mutating func settleOutputLosses(now: Milliseconds, into out: inout [Command]) {
        let window = policy.outputs.switchWindow
        let due = streams.dueIDs(where: { stream in
            stream.isLive && stream.outputLoss.map { $0.phase == .waiting && now >= $0.since + window } == true
        })
        for sid in due {
            guard var stream = streams[sid], stream.isLive, var loss = stream.outputLoss, loss.phase == .waiting,
                  now >= loss.since + window else { continue }
            let back = loss.deviceBack
                || (loss.port == nil && loss.device != nil && outputs.values.contains { $0.device == loss.device })
            if loss.fallbackMute {
                if back || !stream.playing {
                    // The interruption's mute goes on, and ends with it.
                    stream.outputLoss = nil
                    out.append(.decision(decision(stream, reason: back ? "\(loss.label) came back within \(window) ms" : loss.reason,
                                                  action: "muted for its interruption only")))
                } else {
                    stream.pausedBy = nil
                    stream.effect = .none
                    loss.phase = .held
                    loss.fallbackMute = false // the mute is the loss's now
                    stream.outputLoss = loss
                    out.append(.hold(sid))
                    out.append(.decision(decision(stream, reason: loss.reason, action: "stays muted " + Self.untilTheUserActs,
                                                  outcome: .muted)))
                }
            } else if back {
                unmute(&stream, reason: "\(loss.label) came back within \(window) ms",
                       action: "unmuted (not lost: a profile switch)", now: now, into: &out)
            } else if !stream.playing {
                // Paused meanwhile (by the user, or another app's music): nothing to pause.
                unmute(&stream, reason: loss.reason, action: "unmuted (paused meanwhile)", now: now, into: &out)
            } else if loss.action == .pause, let player = stream.player {
                stream.playing = false
                loss.phase = .pausing
                stream.outputLoss = loss
                out.append(.pause(sid, player))
                out.append(.decision(decision(stream, reason: loss.reason, action: "paused indefinitely", outcome: .paused)))
            } else {
                loss.phase = .held
                stream.outputLoss = loss
                out.append(.hold(sid))
                out.append(.decision(decision(stream, reason: loss.reason + (loss.action == .pause ? "; no player" : ""),
                                              action: "stays muted " + Self.untilTheUserActs, outcome: .muted)))
            }
            streams[sid] = stream
        }
    }

    /// The lost device (or port) is back and the stream is on it.
    private mutating func outputBack(_ stream: inout TrackedStream, now: Milliseconds, into out: inout [Command]) {
        guard let loss = stream.outputLoss else { return }
        if loss.fallbackMute {
            stream.outputLoss = nil // the interruption's mute goes on, and ends with it
            return
        }
        if loss.phase == .waiting {
            unmute(&stream, reason: "\(loss.label) came back", action: "unmuted (not lost: the same device is back)",
                   now: now, into: &out)
            return
        }
        guard let after = policy.outputs.resumeWhenBack, now - loss.since <= after, !loss.touched,
              nowPlaying.owner.flatMap({ streams[$0]?.app }) == stream.app else { return }
        let reason = "\(loss.label) came back within \(after) ms (resume-when-back)"
        if loss.phase != .held, let player = stream.player, !stream.playing {
            out.append(.resume(stream.id, player))
            stream.playing = true
            stream.restart(at: now)
            if loss.holdsMute {
                unmute(&stream, reason: reason, action: "unmuted", now: now, into: &out)
            }
            stream.outputLoss = nil
            out.append(.decision(decision(stream, reason: reason, action: "resumed")))
        } else if loss.holdsMute {
            unmute(&stream, reason: reason, action: "unmuted", now: now, into: &out)
        }
    }

    /// Gives the stream back its level: the loss is over for it.
    private mutating func unmute(_ stream: inout TrackedStream, reason: String, action: String, now: Milliseconds,
                                 into out: inout [Command]) {
        let target = stream.effect.factor
        stream.outputLoss = nil
        stream.ramp = Ramp(from: 0, to: target, start: now, duration: 0)
        out.append(.unmute(stream.id, to: target, fade: 0))
        out.append(.decision(decision(stream, reason: reason, action: action)))
    }

    // MARK: - The user and the player

    /// The player reported Playing or Paused while a loss is in force. Returns whether that was all.
    mutating func outputLossPlayback(_ stream: inout TrackedStream, playing: Bool, now: Milliseconds,
                                     into out: inout [Command]) {
        guard var loss = stream.outputLoss else { return }
        if loss.fallbackMute {
            // Played by the user: what the interruption's mute does next is its own. A stop is not an act
            // (the server's rescue move may unlink the stream for an instant): the window's end decides.
            if playing, !stream.playing { stream.outputLoss = nil }
            return
        }
        if playing, !stream.playing {
            // Played by the user: on whatever output it is on now, at the user's volume, unmuted.
            if loss.holdsMute {
                unmute(&stream, reason: "played by the user", action: "unmuted", now: now, into: &out)
            }
            stream.outputLoss = nil
        } else if !playing, loss.phase == .pausing {
            loss.phase = .paused
            stream.outputLoss = loss
            unmute(&stream, reason: "its player paused", action: "unmuted (paused, at the user's volume)",
                   now: now, into: &out)
            stream.outputLoss = policy.outputs.resumeWhenBack == nil ? nil : loss
        }
    }

    /// The user changed the stream's volume or mute while a loss is in force: a held mute is over (the user
    /// acted); a stream kept for `resume-when-back` is never resumed. Returns whether the event is dealt with.
    mutating func outputLossTouched(_ stream: inout TrackedStream, volume: Bool, muted: Bool?, now: Milliseconds,
                                    into out: inout [Command]) -> Bool {
        guard var loss = stream.outputLoss else { return false }
        if loss.fallbackMute {
            stream.outputLoss = nil // the user acts: what the interruption's mute does next is its own
            return false
        }
        guard loss.holdsMute else {
            loss.touched = true
            stream.outputLoss = loss
            return false
        }
        if volume {
            stream.effect = stream.effect == .pause ? .pause : .none
            stream.userOwnsVolume = true
            out.append(.yieldVolume(stream.id))
            stream.outputLoss = nil
            stream.ramp = Ramp(from: 0, to: 1, start: now, duration: 0)
            out.append(.unmute(stream.id, to: 1, fade: 0))
            out.append(.decision(decision(stream, reason: "the user changed its volume", action: "unmuted")))
            return true
        }
        if muted == false {
            if stream.effect == .pause {
                stream.effect = .none
                stream.userOwnsPlayback = true
            }
            unmute(&stream, reason: "the user unmuted it", action: "unmuted", now: now, into: &out)
            return true
        }
        // The user muted it: the mute is theirs from now on; its volume comes back under it, from where
        // it is (usually the silence of the loss's mute; the full level when the user set the volume under
        // a mute fallback the loss took over).
        stream.userMuted = true
        stream.outputLoss = nil
        let target = stream.effect.factor
        let current = stream.ramp.value(at: now)
        stream.ramp = Ramp(from: current, to: target, start: now, duration: 0)
        out.append(.ramp(stream.id, from: current, to: target, duration: 0))
        return true
    }
}
