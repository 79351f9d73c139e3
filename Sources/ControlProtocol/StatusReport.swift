import AudioPolicy

/// What `audio-policyd status` shows: every stream, what the policy does to it, and the Now Playing owner.
public struct StatusReport: Codable, Hashable, Sendable {
    /// One stream (or a hook's interruption).
    public struct Stream: Codable, Hashable, Sendable {
        /// The sink input's index (absent for a hook's interruption).
        public var index: UInt32?
        public var application: String
        public var pid: Int?
        public var role: String?
        public var `class`: String
        public var state: StreamState
        /// The policy factor on the stream's own volume (1 = untouched).
        public var factor: Double
        public var muted: Bool
        public var spoken: Bool
        /// Why the stream has its class: the rule (file:line) or `default class`.
        public var rule: String
        public var hook: String?
        /// The user's own volume (linear amplitude, channels averaged; 1 = 100 %), before the policy factor.
        public var volume: Double? = nil
        /// Whether it makes sound (its monitor's last word; a stream counts as audible until measured).
        public var audible: Bool? = nil
        /// Whether the daemon measures its sound now (only while that can change a decision).
        public var measured: Bool? = nil
        /// The factor the policy is ramping it to (``factor`` once the ramp is over).
        public var target: Double? = nil
        /// When it gets there: milliseconds on the daemon's clock, the `at` of event lines.
        public var settles: Int? = nil
        /// The sandboxed app's Flatpak id or Snap name, when it runs in one.
        public var appID: String? = nil
        /// The MPRIS bus name (or hook claim) of the player that plays it; none means it is faded and
        /// muted rather than paused (what `doctor` reports).
        public var player: String? = nil

        /// Every field, like the memberwise initializer (which is internal to this module).
        package init(
            index: UInt32? = nil, application: String, pid: Int? = nil, role: String? = nil, `class`: String,
            state: StreamState, factor: Double, muted: Bool, spoken: Bool, rule: String, hook: String? = nil,
            volume: Double? = nil, audible: Bool? = nil, measured: Bool? = nil, target: Double? = nil,
            settles: Int? = nil
        ) {
            self.index = index
            self.application = application
            self.pid = pid
            self.role = role
            self.`class` = `class`
            self.state = state
            self.factor = factor
            self.muted = muted
            self.spoken = spoken
            self.rule = rule
            self.hook = hook
            self.volume = volume
            self.audible = audible
            self.measured = measured
            self.target = target
            self.settles = settles
        }
    }

    /// The Now Playing owner.
    public struct Owner: Codable, Hashable, Sendable {
        public var application: String
        public var pid: Int?
        public var index: UInt32?
        /// The MPRIS bus name of its player (`org.mpris.MediaPlayer2.mpv`), if it has one.
        public var player: String? = nil
        /// The player's `Identity` (`mpv`, `Firefox`), or the hook's app name.
        public var identity: String? = nil
        /// The player's `PlaybackStatus`, if known.
        public var playbackStatus: String? = nil
        public var title: String? = nil
        public var artist: String? = nil
        /// The claim token, when a hook claimed Now Playing.
        public var claim: String? = nil
        /// The engine's id of the owner: a sink input's index, a hook's or a claim's token (fixtures' ids).
        public var stream: String? = nil
        /// The sandboxed app's Flatpak id or Snap name, when it runs in one (`pid` is then its host pid).
        public var appID: String? = nil

        /// Every field, like the memberwise initializer (which is internal to this module).
        package init(
            application: String, pid: Int? = nil, index: UInt32? = nil, player: String? = nil, identity: String? = nil,
            playbackStatus: String? = nil, title: String? = nil, artist: String? = nil, claim: String? = nil,
            stream: String? = nil
        ) {
            self.application = application
            self.pid = pid
            self.index = index
            self.player = player
            self.identity = identity
            self.playbackStatus = playbackStatus
            self.title = title
            self.artist = artist
            self.claim = claim
            self.stream = stream
        }
    }

    public var nowPlaying: Owner?
    public var streams: [Stream]
    /// The policy in force (a path, or `<embedded default>`): its base, without the drop-ins.
    public var policy: String
    /// Every file of the policy in force, in the order merged: the base, then its drop-ins (nil from a
    /// daemon older than drop-ins).
    public var policyFiles: [String]? = nil
    /// For each class, where each of its settings in force was written, `FILE:LINE`: `ambient` →
    /// `unfocused` → `/etc/audio-policyd/policy.d/50-games.toml:2`. With drop-ins, one class's settings
    /// can come from several files.
    public var classSettings: [String: [String: String]]? = nil
    /// The sound server the daemon is connected to, if it is.
    public var server: String?
    /// The last decisions (about 20), oldest first: what was done to which stream, and why.
    public var decisions: [DecisionRecord]? = nil

    /// Every field, like the memberwise initializer (which is internal to this module).
    package init(
        nowPlaying: Owner? = nil, streams: [Stream], policy: String, server: String? = nil,
        decisions: [DecisionRecord]? = nil, policyFiles: [String]? = nil,
        classSettings: [String: [String: String]]? = nil
    ) {
        self.nowPlaying = nowPlaying
        self.streams = streams
        self.policy = policy
        self.server = server
        self.decisions = decisions
        self.policyFiles = policyFiles
        self.classSettings = classSettings
    }
}

extension StatusReport {
    /// An app's name for people: `mpv`, or `mpv [io.mpv.Mpv]` for a sandboxed one (its app id is what
    /// rules and the user know it by; a sandbox's own pid is never shown).
    public static func label(application: String, appID: String?) -> String {
        guard let appID, appID != application else { return application }
        return "\(application) [\(appID)]"
    }
}
