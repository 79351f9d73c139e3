/// What a soak run does: how long, how fast, how often the server restarts and the daemon is killed,
/// and where the daemon comes from. `audio-policyd soak` fills it from its options.
public struct SoakPlan: Sendable {
    /// Seconds of churn.
    public var duration: Double = 600
    public var seed: UInt64 = 1
    /// Streams started per minute.
    public var ratePerMinute: Double = 300
    /// The most apps (client connections) alive at once: PulseAudio takes at most 64 clients.
    public var maxApps = 30
    /// The most streams of the music app (the ones that survive checkpoints) alive at once.
    public var maxMusic = 5
    /// User volume and mute changes per minute, on live streams.
    public var userChangesPerMinute: Double = 60
    /// Whether the user changes only streams whose level has been still for a while (not mid-ramp):
    /// leaves out the known race of a change overwritten by the daemon's next ramp step before it
    /// is seen (the test command's short run uses it; longer runs keep the race in).
    public var usersAvoidRamps = false
    /// The share of ended streams whose app quits abruptly.
    public var abruptShare = 0.25
    /// The share of streams created corked.
    public var corkedShare = 0.2
    /// Seconds between checkpoints (about: each is drawn from half to one and a half times it).
    public var checkpointInterval: Double = 30
    /// A shell command that restarts the sound server (nil: no restarts).
    public var restartServerCommand: String?
    /// Seconds between server restarts (about).
    public var restartInterval: Double = 90
    /// Seconds between output episodes (about; 0: none): a Bluetooth headset arrives, the user moves
    /// streams onto it, and it goes away (lost, a profile switch, or with nothing left on it).
    public var outputInterval: Double = 0
    /// Seconds between daemon kills (about; 0: none).
    public var killInterval: Double = 60
    /// The daemon executable (`run` is its subcommand).
    public var daemonExecutable: String
    /// The policy the daemon runs (nil: its default).
    public var policy: String?
    /// Where the daemon's folders and logs go.
    public var folder: String
    /// The longest a checkpoint waits for the daemon to have undone everything, seconds.
    public var settleTimeout: Double = 15
    /// RSS growth of one daemon between its first and last checkpoint that counts as a leak, KiB.
    public var rssGrowthLimitKiB = 16 * 1024
    /// A fault the soak makes on purpose, to show that the checker catches it.
    public var fault: SoakFault?

    public init(daemonExecutable: String, folder: String) {
        self.daemonExecutable = daemonExecutable
        self.folder = folder
    }
}

/// Faults a soak can inject on purpose (tests only): each must come out as a violation.
public enum SoakFault: String, CaseIterable, Sendable {
    /// At the first checkpoint, the soak itself sets a surviving stream to half its level behind the
    /// user's back, as a daemon that forgot to restore it would leave it.
    case strayVolume = "stray-volume"
    /// After a headset with streams on it goes away, the user never acts on them: the daemon rightly
    /// holds them muted, and the checkpoint must find them so (the loss is shown to be a real one).
    case userIgnoresLoss = "user-ignores-loss"
}
