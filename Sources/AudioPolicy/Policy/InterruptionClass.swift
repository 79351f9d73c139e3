/// A named class of audio in a policy (`[class.NAME]`): its kind, whom it outranks, and how it ducks.
public struct InterruptionClass: Hashable, Sendable {
    public var name: String
    public var kind: InterruptionKind
    /// Classes this one outranks, directly as written in `above` and transitively.
    public var outranks: Set<String>
    /// Height in the `above` graph: 0 for a class above nothing. Shown as the priority.
    public var rank: Int
    /// Level a `short` class ducks the streams it outranks to (also used by a primary during its grace).
    public var duck: Level
    /// Ramp down to the duck level, ms.
    public var duckRamp: Milliseconds
    /// Ramp back to the stream's own volume, ms.
    public var restoreRamp: Milliseconds
    /// How long the effect lingers after the interruption ends, so back-to-back prompts do not pump, ms.
    public var hold: Milliseconds
    /// `primary` only: how long a new stream must play before it pauses others (meanwhile it ducks them), ms.
    public var grace: Milliseconds
    /// How long a stream of this class may stay silent (its monitor carries no sound) before it stops
    /// interrupting, ms; nil: never (a call is a session, silent whenever nobody speaks). Apps keep
    /// streams open and silent — a browser tab with WebAudio, speech-dispatcher between phrases.
    public var releaseAfter: Milliseconds?
    /// What its streams do when the output they are heard on is lost (`on-output-loss`): by default
    /// `pause` for primary classes, `nothing` for the rest (a call follows the server's move).
    public var onOutputLoss: OutputLossAction
    /// What its streams do while none of their app's windows has focus (`unfocused`, default `nothing`).
    public var unfocused: UnfocusedAction
    /// Level `unfocused = "duck"` ducks to (`unfocused-duck`, default −12 dB); the class's own `duck-ramp`
    /// and `restore-ramp` move it.
    public var unfocusedDuck: Level
    /// What its streams do when their app is Now Playing and its last window closes (`closed-window`,
    /// default `nothing`).
    public var closedWindow: ClosedWindowAction
    /// Where `[class.NAME]` stands, when it came from a file (the first file that defines it).
    public var location: SourceLocation?
    /// Where each key written for the class was written, by its name in the file (`duck`, `unfocused`):
    /// with drop-ins, a class's keys can come from several files, and `explain` and `status` say which.
    public var origins: [String: SourceLocation] = [:]

    public init(
        name: String, kind: InterruptionKind, outranks: Set<String> = [], rank: Int = 0,
        duck: Level = Level(decibels: -14), duckRamp: Milliseconds = 500, restoreRamp: Milliseconds = 1000,
        hold: Milliseconds = 500, grace: Milliseconds = 1500, releaseAfter: Milliseconds?? = nil,
        onOutputLoss: OutputLossAction? = nil, unfocused: UnfocusedAction = .nothing,
        unfocusedDuck: Level = Level(decibels: -12), closedWindow: ClosedWindowAction = .nothing,
        location: SourceLocation? = nil
    ) {
        self.name = name
        self.kind = kind
        self.outranks = outranks
        self.rank = rank
        self.duck = duck
        self.duckRamp = duckRamp
        self.restoreRamp = restoreRamp
        self.hold = hold
        self.grace = grace
        self.releaseAfter = releaseAfter ?? Self.defaultReleaseAfter(kind)
        self.onOutputLoss = onOutputLoss ?? OutputLossAction.defaultFor(kind)
        self.unfocused = unfocused
        self.unfocusedDuck = unfocusedDuck
        self.closedWindow = closedWindow
        self.location = location
    }

    /// `release-after` when a class does not say: calls never end by silence; the rest after 1 s.
    public static func defaultReleaseAfter(_ kind: InterruptionKind) -> Milliseconds? {
        switch kind {
        case .call, .mix, .ambient: return nil
        case .primary, .short: return 1000
        }
    }
}
