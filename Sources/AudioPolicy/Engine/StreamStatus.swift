/// A stream as `status` shows it: who it is, its class, what the policy is doing to it.
public struct StreamStatus: Hashable, Sendable {
    /// The engine's id of the stream (or the hook's request): what actuation finds its record by.
    public var stream: StreamID
    /// Its printed form (``StreamID/rawValue``), as `status` shows it.
    public var id: String
    public var application: String
    public var role: String?
    public var className: String
    public var spoken: Bool
    public var state: StreamState
    /// The policy factor on the stream's own volume (1 = untouched).
    public var factor: Double
    /// The factor its ramp is heading for, and when it gets there (now, when it is steady): what the
    /// last decision about it comes to, for `audio-policyd record`'s expectations.
    public var target: Double
    public var settlesAt: Milliseconds
    public var muted: Bool
    /// A hook's interruption (no stream of its own), or a recording's (``isCapture``).
    public var isHook: Bool
    /// A microphone recording's interruption (an app that listens): no stream of its own either.
    public var isCapture = false
    /// A recording's interruption held off because its app plays: it interrupts nothing meanwhile.
    public var isHeldOff = false
    /// The rule that classified the stream, or `default class`.
    public var reason: String
    /// Whether it makes sound, as far as the engine knows (its monitor's last word; audible until measured).
    public var audible: Bool
    /// Whether its sound is being measured now.
    public var measured: Bool
    /// Why its output's loss holds it muted or paused (`headset "WH-1000XM4" went away`), if it does.
    public var outputLoss: String?

    /// A hook's request that waits for the call to end (``CallWait``): `waiting`, changing nothing yet.
    init(waiting request: CallWait.Request, at now: Milliseconds) {
        stream = request.token
        id = request.token.rawValue
        application = request.properties["application.name"] ?? request.token.rawValue
        role = request.properties["media.role"]
        className = request.className
        spoken = false
        state = .waiting
        factor = 1
        target = 1
        settlesAt = now
        muted = false
        isHook = true
        reason = "waits for the call to end"
        audible = true
        measured = false
    }

    init(_ stream: TrackedStream, at now: Milliseconds) {
        self.stream = stream.id
        id = stream.id.rawValue
        application = stream.applicationName
        role = stream.properties["media.role"]
        className = stream.interruptionClass.name
        spoken = stream.classification.spoken
        state = stream.state(at: now)
        factor = stream.ramp.value(at: now)
        target = stream.ramp.to
        settlesAt = max(now, stream.ramp.end)
        muted = stream.policyMutes
        isHook = stream.isHook
        reason = stream.classification.reason
        audible = stream.audibility.audible
        measured = false
        outputLoss = stream.outputLoss?.reason
    }
}
