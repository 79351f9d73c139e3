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
    }

    public var nowPlaying: Owner?
    public var streams: [Stream]
    /// The policy in force (a path, or `<embedded default>`).
    public var policy: String
    /// The sound server the daemon is connected to, if it is.
    public var server: String?
    /// The last decisions (about 20), oldest first: what was done to which stream, and why.
    public var decisions: [DecisionRecord]? = nil
}
