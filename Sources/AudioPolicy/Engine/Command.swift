/// What the engine asks the shell to do. Volumes are *policy factors*: linear multipliers applied to
/// the stream's own (user-set, per-channel) volume; factor 1 means "exactly the user's volume".
public enum Command: Hashable, Sendable {
    /// Ramp the policy factor from `from` to `to` over `duration` ms, starting now. Interpolation is
    /// linear in decibels (floored at ``Level/floorDecibels``), so the change sounds even.
    case ramp(StreamID, from: Double, to: Double, duration: Milliseconds)
    /// Pause fallback for a stream with no controllable player: fade from factor `from` (where the stream
    /// is now, mid-ramp included) to silence over `fade` ms, then mute.
    case mute(StreamID, from: Double, fade: Milliseconds)
    /// The policy's mute of the stream is held until the user acts: its output went away (and did not
    /// come back within the switch window), and it has no player to pause or was muted for an
    /// interruption when it went. Unlike the mute fallback's, a crash must not undo it, or the next run
    /// would let the stream play on the speakers. Ends with ``unmute(_:to:fade:)``, or with the user's
    /// own mute.
    case hold(StreamID)
    /// Undo ``mute(_:from:fade:)``: unmute, then fade in from silence to factor `to` over `fade` ms.
    case unmute(StreamID, to: Double, fade: Milliseconds)
    /// Ask the stream's player to pause (MPRIS `Pause`).
    case pause(StreamID, PlayerID)
    /// Ask the stream's player to play again (MPRIS `Play`); only ever for a pause the engine made.
    case resume(StreamID, PlayerID)
    /// The user changed the volume of a stream under a duck: stop any ramp and leave the user's new
    /// volume alone (factor 1 from now on: it is the stream's own level).
    case yieldVolume(StreamID)
    /// Someone else (its user, a mixer, the app) changed the volume of a stream the policy has not
    /// changed: that volume is its own level from now on, which the next duck scales and its end gives
    /// back. With ``yieldVolume(_:)``, the engine answers every such change, so the shell never decides
    /// whose a level is.
    case adoptLevel(StreamID)
    /// After ``yieldVolume(_:)`` or ``adoptLevel(_:)``: write the stream's own level once more. A volume
    /// write of ours was on its way when its user's change was seen (``Event/userVolume(_:_:overtakesOurWrite:)``)
    /// and lands after it; written again, the user's level is the last.
    case rewriteLevel(StreamID)
    /// A stream the server started at one of our saved levels or mutes (``Event/startedAtOurSave(_:levelAway:mutedByUs:)``)
    /// is put right where the policy leaves it alone: written at its own level (`level`), unmuted
    /// (`unmute`). What the policy does to it, it does from the stream's own level with its own writes.
    case putBack(StreamID, level: Bool, unmute: Bool)
    /// A stream the policy had changed went away: write its saved (stream-restore) volume and mute back
    /// to the user's own, so the app's next stream does not start ducked or muted.
    case repairSaved(StreamID)
    /// Start (`true`) or stop measuring whether the stream makes sound, reported back as
    /// ``Event/audibility(_:audible:)``. Asked only while its sound can change a decision, so that music
    /// playing alone costs no wake-ups.
    case measure(StreamID, Bool)
    /// A hook's interruption that waited for a call to end (``Event/interruptionAfterCall(token:className:_:)``)
    /// began, or began at once: its hook may play now.
    case interruptionBegan(StreamID)
    /// The Now Playing owner changed (the stream that represents it, or nil for none).
    case nowPlaying(StreamID?)
    /// A decision worth a log line: why a stream was ducked, paused, restored.
    case decision(Decision)

    /// What an obedient player answers at once: Paused to a `.pause`. Fixture replays and engine tests
    /// simulate such players (`players-obey-pause`), as a real one answers within milliseconds.
    public var obedientAnswer: Event? {
        if case let .pause(id, _) = self { .playback(id, playing: false) } else { nil }
    }
}

/// One logged decision: which stream, which class, which rule, what was done.
public struct Decision: Hashable, Sendable, CustomStringConvertible {
    /// What a decision is about, so that the shell can weigh it without reading its words.
    public enum Kind: String, Hashable, Sendable, Codable {
        /// A stream (or a hook's interruption) started and was classified: nothing was done yet. Logged
        /// with `--verbose`; not kept in `status`'s last decisions (starts would crowd out the doings).
        case classified
        /// A live stream's class changed: its player came or went, its properties changed, its app started
        /// or stopped recording, the policy was reloaded. Always logged: it says why a game became media.
        case reclassified
        /// Its meter said audible or silent: a fact the next decisions follow. Logged with `--verbose`.
        case measured
        /// Something was done to the stream (ducked, paused, muted, restored, resumed, cancelled, repaired).
        case acted
    }

    /// The lasting state an `acted` decision put its stream in, so that a reader (the timeline) can tell
    /// which decision a duck, pause or mute came from without reading `action`'s words.
    public enum Outcome: String, Hashable, Sendable {
        case ducked, paused, muted
    }

    public var stream: StreamID
    public var application: String
    public var className: String
    public var reason: String
    public var action: String
    public var kind: Kind
    /// Ducked, paused or muted by this decision; nil for the others (restored, resumed, cancelled, …).
    public var outcome: Outcome?

    public init(stream: StreamID, application: String, className: String, reason: String, action: String,
                kind: Kind = .acted, outcome: Outcome? = nil) {
        self.stream = stream
        self.application = application
        self.className = className
        self.reason = reason
        self.action = action
        self.kind = kind
        self.outcome = outcome
    }

    public var description: String {
        "stream \(stream) (\(application)) class=\(className) [\(reason)]: \(action)"
    }
}
