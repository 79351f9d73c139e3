/// The engine's record of one stream (or one hook's interruption): what it is and what the policy
/// has done to it.
struct TrackedStream: Sendable {
    /// What rarely changes: who the stream is and its class. Shared and immutable, so that copying a
    /// stream's record — which every decision does, for every stream — costs one retain.
    final class Identity: Sendable {
        let id: StreamID
        let properties: Properties
        let player: PlayerID?
        let classification: Classification
        let isHook: Bool
        /// Who the stream belongs to: streams of one app never interrupt each other, and Now Playing
        /// is tracked per app.
        let app: String

        init(id: StreamID, properties: Properties, player: PlayerID?, classification: Classification, isHook: Bool) {
            self.id = id
            self.properties = properties
            self.player = player
            self.classification = classification
            self.isHook = isHook
            self.app = TrackedStream.app(of: id, properties, player)
        }

        func with(properties: Properties? = nil, player: PlayerID?? = nil,
                  classification: Classification? = nil) -> Identity {
            Identity(id: id, properties: properties ?? self.properties, player: player ?? self.player,
                     classification: classification ?? self.classification, isHook: isHook)
        }
    }

    private(set) var identity: Identity

    var id: StreamID { identity.id }
    var isHook: Bool { identity.isHook }
    var app: String { identity.app }
    var properties: Properties {
        get { identity.properties }
        set { identity = identity.with(properties: newValue) }
    }
    var player: PlayerID? {
        get { identity.player }
        set { identity = identity.with(player: .some(newValue)) }
    }
    var classification: Classification {
        get { identity.classification }
        set { identity = identity.with(classification: newValue) }
    }

    /// Whether its player makes it media: the player said it plays (or was never told of) as the stream
    /// started, or within ``Engine/playerWindow`` of that (``Event/playerStatus(_:_:)``).
    var playerCounts = false
    /// The player the policy sees (the pseudo-property `player`): its player, when that makes it media.
    var countedPlayer: PlayerID? { playerCounts ? player : nil }

    /// When it started, or last started playing again.
    var startedAt: Milliseconds
    /// Whether it is making sound, and how much of its grace it has used.
    var audibility: Audibility
    /// Increases each time the stream starts or the user resumes it: among streams of one class, the
    /// more recently activated one wins.
    var activation: Int
    /// When it ended; an ended interrupter lingers for its class's hold, then is dropped.
    var endedAt: Milliseconds?

    /// A primary stream past its grace time, pausing the streams it outranks.
    var escalated = false
    /// What the player (or the user) last reported; streams start playing.
    var playing = true
    /// When it last stopped playing (corked, or its player said Paused) while nobody held it paused; nil
    /// while it plays. Playing again within ``Engine/glitch`` of it is the same sound going on.
    var stoppedAt: Milliseconds?
    /// That stop was its stream's alone: its player said Playing then, and has said nothing else since
    /// (mpv restarting its audio after an underrun corks and uncorks its stream, and on a loaded machine
    /// that takes longer than ``Engine/glitch``). Playing again within ``Engine/streamFlicker`` of it is
    /// the same sound going on.
    var stoppedUnderPlayingPlayer = false
    /// Whether it has played since it was created: a stream created corked (a softphone's before the call,
    /// a browser's before its page plays) interrupts nothing until it does.
    var hasPlayed = true
    /// Set while the engine holds this stream paused and means to resume it. Whatever it becomes, what
    /// was noted of the mute fallback it replaces goes with it.
    var pausedBy: PauseMechanism? {
        didSet {
            if pausedBy != .mute { fallbackAt = nil; pausedLateByPlayer = false }
        }
    }
    /// When the mute fallback took over from a Pause its player had not confirmed in time: a Paused
    /// within the policy's `pause-timeout` after that is the Pause obeyed late (a player on a loaded
    /// machine), not the user pausing a stream they cannot hear.
    var fallbackAt: Milliseconds?
    /// Its player obeyed the engine's Pause after the mute fallback took over: the end of the pause
    /// resumes it as well as unmuting it, or the call would leave it paused for good.
    var pausedLateByPlayer = false
    /// When the engine last asked the stream's player to pause (to be resumed): the player has the
    /// policy's `pause-timeout` from then to report Paused (``Engine/confirmPauses(now:into:)``).
    var pauseAskedAt: Milliseconds?

    /// When a Pause the player has not confirmed times out: the stream is held paused by its player and
    /// still playing, as far as anybody has reported.
    func pauseTimesOut(after timeout: Milliseconds) -> Milliseconds? {
        guard pausedBy == .player, playing, let asked = pauseAskedAt else { return nil }
        return asked + timeout
    }
    /// The effect the engine has applied.
    var effect: Effect = .none
    /// The class whose duck was applied last: its ramps are used to duck and restore.
    var duckClass: InterruptionClass?
    /// The effect in force is focus's (its app's windows are unfocused): its end is focus coming back.
    var duckedByFocus = false
    /// The policy factor over time.
    var ramp = Ramp.steady(1)
    /// The user changed the volume during a duck: no more ducking until the ducks are over.
    var userOwnsVolume = false
    /// The user resumed or unmuted during a transient pause: no more pausing until the pauses are over.
    var userOwnsPlayback = false
    /// The user muted it: the mute fallback leaves it alone (and so never unmutes it).
    var userMuted = false
    /// The output it plays on, once told (``Event/streamMoved(_:to:)``).
    var output: OutputID?
    /// The output it was moved off, and when: a removal of that output soon after was the server's rescue.
    var movedOff: (output: OutputID, at: Milliseconds)?
    /// What the loss of its output did to it, while that is in force.
    var outputLoss: OutputLoss?

    init(id: StreamID, properties: Properties, player: PlayerID?, classification: Classification,
         isHook: Bool, startedAt: Milliseconds, activation: Int) {
        self.identity = Identity(id: id, properties: properties, player: player, classification: classification,
                                 isHook: isHook)
        self.startedAt = startedAt
        self.audibility = Audibility(at: startedAt)
        self.activation = activation
    }

    var interruptionClass: InterruptionClass { classification.interruptionClass }

    /// When a primary stream's grace runs out (counting audible time only), nil while silent; held back
    /// while a meter's first verdict is pending, for at most ``Audibility/verdictWait``.
    var graceEnds: Milliseconds? {
        guard let ends = audibility.graceEnds(after: interruptionClass.grace) else { return nil }
        guard let pending = audibility.verdictPendingSince else { return ends }
        return max(ends, pending + Audibility.verdictWait)
    }

    /// When a silent stream stops interrupting: its class's `release-after`, then its hold.
    var silenceEndsInterruption: Milliseconds? {
        audibility.releasedAt(after: interruptionClass.releaseAfter).map { $0 + interruptionClass.hold }
    }

    /// Its player, which the engine paused, is gone. Still playing, it is paused again by the mute fallback
    /// (its effect is forgotten so reconciling applies the pause anew); no longer playing, its effect stays
    /// on record, so reconciling gives back a duck it carried into the pause.
    mutating func losePlayerPause() {
        pausedBy = nil
        if playing { effect = .none }
    }

    /// Starts over as a new sound: grace, audibility (a stream resumed or uncorked).
    mutating func restart(at now: Milliseconds) {
        startedAt = now
        audibility.restart(at: now)
    }
    var isLive: Bool { endedAt == nil }

    static func app(of id: StreamID, _ properties: Properties, _ player: PlayerID?) -> String {
        // The process first: a browser's music (with its MPRIS player) and its notification sounds
        // (without) are one app.
        for key in ["application.process.id", "application.id", "pipewire.access.portal.app_id",
                    "application.flatpak.id"] {
            if let value = properties[key], !value.isEmpty { return "\(key)=\(value)" }
        }
        if let player { return "player:\(player.rawValue)" }
        if let name = AppName.meaningful(in: properties) { return "app=\(name)" }
        return "stream:\(id.rawValue)"
    }

    /// A name for people: the application's name (or binary, where the name is a generic one), else the
    /// stream id.
    var applicationName: String { AppName.forPeople(properties, id: id) }

    /// Whether the policy holds this stream muted: the mute fallback of a pause, or the loss of its output.
    /// One rule, read by every place that restores, restates or reports a mute.
    var policyMutes: Bool { pausedBy == .mute || outputLoss?.holdsMute == true }

    /// True while the policy's changes to this stream are still in force (so its saved volume is wrong).
    func isAltered(at now: Milliseconds) -> Bool {
        policyMutes || effect != .none || ramp.value(at: now) != 1
    }

    func state(at now: Milliseconds) -> StreamState {
        if !isLive { return .ended }
        if pausedBy != nil || !playing || outputLoss?.holdsMute == true { return .paused }
        if case .duck = effect { return .ducked }
        return .playing
    }
}
