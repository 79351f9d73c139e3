/// A levels fixture (`Tests/Fixtures/levels/`): a sequence of what streams, their users, the policy, the
/// daemon and the server do to levels and mutes, played on a ``SavingServer`` by ``LevelsRehearsal``,
/// with what the saved entries and streams must hold. docs/fixtures.md lists the verbs.
public struct LevelsScenario: Sendable {
    /// How the rehearsed server saves (`server = "pulseaudio"` or `"pipewire"`).
    public var saving: ServerSaving
    /// The saved entries before the first step (`[[saved]]`).
    public var entries: [(key: String, level: ChannelVolumes, muted: Bool)]
    /// By `at`, then file order.
    public var steps: [Step]

    public struct Step: Sendable {
        public var at: Milliseconds
        public var location: SourceLocation
        public var action: Action
    }

    public enum Action: Sendable {
        /// A stream of `key` starts; its app asks for `level` (nil: none) and `muted`; `beforeWritesApplied`:
        /// before the daemon's last writes to another stream of the key are applied
        /// (``SavingServer/start(key:appLevel:appMuted:beforeWritesApplied:at:)``); `volumeLate`: the server
        /// tells the daemon its volume and mute only later (pipewire-pulse: ``volumeArrives(_:restoredNow:)``);
        /// `killedAsItStarts`: the daemon is killed as it hears of it, its journal written and the start not
        /// yet put right (``RehearsedDaemon/appeared(_:volumeLate:killedAsItStarts:on:at:)``);
        /// `writesUnreported`: after the server applied the daemon's writes, before the daemon heard their
        /// reports (pipewire-pulse reports a write only once it has answered it, and WirePlumber gives a new
        /// stream its key's entry on its own schedule).
        case start(String, key: String, level: ChannelVolumes?, muted: Bool, beforeWritesApplied: Bool = false,
                   volumeLate: Bool = false, killedAsItStarts: Bool = false, writesUnreported: Bool = false)
        /// The server tells the volume and mute of a stream it announced without them (pipewire-pulse
        /// announces a new stream at 0 and tells its restored volume a few milliseconds later).
        /// `restoredNow`: WirePlumber restored the key's entry only now, as it does once it has handled the
        /// new node (``SavingServer/restoreNow(_:at:)``): the entry as it is now, not as it was at the start.
        case volumeArrives(String, restoredNow: Bool = false)
        /// The policy ramps its factor to `to` in `steps` writes (a duck: below 1; a restore: 1).
        case ramp(String, to: Double, steps: Int)
        /// The mute fallback fades it out and mutes it.
        case fadeOut(String)
        /// The policy's mute is held until the user acts (its output went away).
        case hold(String)
        /// The policy's mute is over: unmuted and faded in.
        case unmute(String)
        /// Its user sets its level.
        case userLevel(String, ChannelVolumes)
        /// Its user mutes or unmutes it.
        case userMute(String, Bool)
        /// The server moves it to another output.
        case move(String)
        /// It ends; `lastWriteLost`: the daemon's last write to it was never applied.
        case end(String, lastWriteLost: Bool)
        /// The daemon is killed (SIGKILL).
        case killDaemon
        /// The daemon starts again (after a kill): recovery from its journal.
        case startDaemon
        /// The server restarts: every stream is gone; the daemon reconnects and recovers.
        case restartServer
        /// `saved = KEY`: the key's saved entry holds `level` (linear, per channel, ±0.01) and `muted`.
        case expectSaved(String, level: [Double]?, muted: Bool?)
        /// `stream = ID`: the server has it at `level` and `muted`; the daemon takes `own` for its own level.
        case expectStream(String, level: [Double]?, own: [Double]?, muted: Bool?)
    }

    public init(saving: ServerSaving, entries: [(key: String, level: ChannelVolumes, muted: Bool)], steps: [Step]) {
        self.saving = saving
        self.entries = entries
        self.steps = steps
    }
}

extension LevelsScenario.Action {
    /// Whether it is an `[[expect]]`.
    public var isExpectation: Bool {
        switch self {
        case .expectSaved, .expectStream: true
        default: false
        }
    }
}
