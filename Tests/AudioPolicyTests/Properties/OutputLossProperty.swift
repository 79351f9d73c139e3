@testable import AudioPolicy
import Foundation

// What output events may do to a stream, modelled from the events alone: which output each stream plays
// on, which outputs are there, and so which streams an output's loss concerns.

/// Follows outputs and stream locations from the events, and which streams an output loss the rules call
/// for is holding (muted at once, then paused or held muted until the user acts).
struct OutputLossModel {
    struct Loss {
        var output: OutputID
        var device: String?
        var port: String?
        var since: Milliseconds
        /// The same device (or the port) was back within the switch window: no pause, the mute undone.
        var back = false
        /// The window has ended.
        var settled = false
    }
    var outputs: [OutputID: Output] = [:]
    var location: [StreamID: OutputID] = [:]
    var movedOff: [StreamID: (output: OutputID, at: Milliseconds)] = [:]
    /// Streams an output loss the rules call for has muted, and the user has not acted on since.
    var losses: [StreamID: Loss] = [:]
    /// Whether each stream plays, as the events and the engine's own Resumes said: a Playing report for a
    /// stream already playing (a Resume's confirmation) is no act of the user's (the engine takes none from
    /// it either).
    var playing: [StreamID: Bool] = [:]
    /// When each stream last stopped: playing again within ``Engine/glitch`` is the same sound going on
    /// (an underrun's cork), no act of the user's, and holds what held it (as the engine takes it).
    var stoppedAt: [StreamID: Milliseconds] = [:]

    /// The streams an output loss in this step concerns (heard on the output, or moved off it by the
    /// server up to ``Engine/rescueLag`` before), with what the loss is; before the step is applied.
    func lossConcerns(_ action: PropertyAction?, at now: Milliseconds) -> (streams: Set<StreamID>, loss: Loss?) {
        guard case let .event(event)? = action else { return ([], nil) }
        switch event {
        case let .outputRemoved(id):
            guard let output = outputs[id] else { return ([], nil) }
            let on = Set(location.filter { $0.value == id }.keys)
            let moved = Set(movedOff.filter { $0.value.output == id && now - $0.value.at <= Engine.rescueLag }.keys)
            return (on.union(moved), Loss(output: id, device: output.device, port: nil, since: now))
        case let .output(id, new):
            guard let before = outputs[id], before.portLost(to: new) else { return ([], nil) }
            return (Set(location.filter { $0.value == id }.keys),
                    Loss(output: id, device: before.device, port: before.port?.name, since: now))
        default:
            return ([], nil)
        }
    }

    /// Applies the step (after the engine took it); returns a violation of "nothing is muted or paused by
    /// an output event the rules do not call for".
    mutating func apply(_ step: Observed, engine: Engine, window: Milliseconds) -> Violation? {
        let (concerned, loss) = lossConcerns(step.action, at: step.time)
        var violation: Violation?
        func flag(_ id: StreamID, _ message: String) {
            if violation == nil {
                violation = Violation(message: message,
                                      expectations: [PropertyDriver.expectStream(id, at: step.time, ["muted = false"])])
            }
        }
        let outputStep: Bool
        if case .event(.output)? = step.action { outputStep = true }
        else if case .event(.outputRemoved)? = step.action { outputStep = true }
        else if case .event(.streamMoved)? = step.action { outputStep = true }
        else { outputStep = false }

        // The same device there when the window ends (the engine's tick then comes first): no loss either.
        for (sid, var held) in losses where !held.settled && step.time >= held.since + window {
            held.settled = true
            if held.port == nil, let device = held.device, outputs.values.contains(where: { $0.device == device }) {
                held.back = true
            }
            losses[sid] = held
        }
        // A device or port back within the window, seen before the commands (a move onto it unmutes). Back
        // at the window's very end is too late: the engine's tick at that instant came first and settled it.
        if case let .event(.output(id, output))? = step.action {
            for (sid, var held) in losses where step.time < held.since + window {
                if held.port != nil {
                    if held.output == id, output.port?.name == held.port, output.port?.available != .no { held.back = true }
                } else if outputs[id] == nil, let device = held.device, output.device == device {
                    held.back = true
                }
                losses[sid] = held
            }
        }
        for command in step.commands {
            switch command {
            // A mute the engine puts down to an output loss (others in the step are an interruption's, the
            // other properties' business: a stream unmuted by a device back may interrupt another).
            case let .mute(id, _, _) where outputStep && engine.streams[id]?.outputLoss?.since == step.time:
                if let loss, concerned.contains(id) {
                    losses[id] = loss
                } else {
                    flag(id, "muted \(id) at \(step.time) ms on \(PropertyDriver.describe(step.action!)), which is no loss of the output it plays on (\(location[id].map(\.rawValue) ?? "none"))")
                }
            case let .pause(id, _) where engine.streams[id]?.outputLoss?.phase == .pausing:
                guard let held = losses[id] else {
                    flag(id, "paused \(id) at \(step.time) ms for an output loss the model saw no reason for")
                    break
                }
                if held.back {
                    flag(id, "paused \(id) at \(step.time) ms though \(held.output)'s device (or port) was back within the \(window) ms window")
                }
            default:
                break
            }
        }
        // A stream on the lost output that the fallback held muted (its call, say, muted it) stays muted
        // with no new command: the rules call for that too (unmuted after the call, it would be heard on
        // the speakers).
        if let loss {
            for id in concerned where losses[id]?.since != step.time && engine.streams[id]?.outputLoss?.since == step.time {
                losses[id] = loss
            }
        }
        // Apply the event to the model.
        if case let .event(event)? = step.action {
            switch event {
            case let .output(id, output): outputs[id] = output
            case let .outputRemoved(id): outputs[id] = nil
            case let .streamMoved(id, to):
                if engine.streams[id]?.isLive == true {
                    if let from = location[id], from != to { movedOff[id] = (from, step.time) }
                    location[id] = to
                }
            case let .streamStarted(id, _, _, isPlaying, _, _, output):
                location[id] = output
                movedOff[id] = nil
                losses[id] = nil
                playing[id] = isPlaying
                stoppedAt[id] = nil
            case let .streamEnded(id):
                location[id] = nil
                movedOff[id] = nil
                losses[id] = nil
                playing[id] = nil
                stoppedAt[id] = nil
            case let .userVolume(id, _, _): losses[id] = nil
            case let .userMute(id, muted) where !muted: losses[id] = nil
            case let .playback(id, isPlaying):
                let glitch = stoppedAt[id].map { step.time - $0 < Engine.glitch } ?? false
                if isPlaying, playing[id] == false, !glitch { losses[id] = nil }
                if !isPlaying, playing[id] != false { stoppedAt[id] = step.time }
                playing[id] = isPlaying
            default: break
            }
        }
        // The engine's own Resume (an interruption over) makes the stream playing as the engine takes it:
        // the Playing its player reports next confirms the Resume, no act of the user's, and a loss taken
        // meanwhile (the jack pulled before the player answered) still holds.
        for case let .resume(id, _) in step.commands { playing[id] = true }
        // Any instant mute undone: once the window has passed, a loss whose device came back holds nothing.
        for (sid, held) in losses where held.back && step.time > held.since + window {
            if let current = engine.streams[sid]?.outputLoss, current.since == held.since, current.holdsMute {
                flag(sid, "\(sid) still held muted at \(step.time) ms by the loss of \(held.output) at \(held.since) ms, though its device (or port) was back within the window")
            }
        }
        return violation
    }

    /// Whether the engine holding `id` muted after the end phase is by design: an output loss the rules
    /// called for, the user not having acted since, the device not back within the window.
    func heldByDesign(_ id: StreamID, engine: Engine) -> Bool {
        guard let held = losses[id], !held.back, let current = engine.streams[id]?.outputLoss else { return false }
        return current.since == held.since && (current.phase == .held || current.phase == .pausing)
    }
}

// MARK: - 7. Output events

/// Nothing is muted or paused by an output event the rules do not call for: a stream not on the lost
/// output, a user's move, the same device back within the window (no pause, the instant mute undone).
struct OutputLossProperty: EngineProperty {
    static let name = "output-loss"
    var model = OutputLossModel()

    mutating func observe(_ step: Observed, engine: Engine) -> Violation? {
        model.apply(step, engine: engine, window: engine.policy.outputs.switchWindow)
    }
}
