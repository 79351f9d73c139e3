import AudioPolicy

/// One event line on the control socket: `{"event": KIND, …}`. Event lines never carry `ok`, so a
/// client can tell them from replies.
///
/// Subscribers (`subscribe`) get the kinds they asked for:
///
/// ```json
/// {"event":"stream","stream":{"index":12,"application":"mpv","class":"primary","state":"ducked",…}}
/// {"event":"now-playing","nowPlaying":{"application":"mpv","pid":4242,"index":12,"player":"org.mpris.MediaPlayer2.mpv",…}}
/// {"event":"decision","decision":{"stream":"12","application":"mpv","class":"primary","reason":"interrupted by class short","action":"ducked to -14.0 dB (0.200) over 500 ms"}}
/// {"event":"player","player":{"name":"org.mpris.MediaPlayer2.mpv","identity":"mpv","pid":4242,"status":"Paused","present":true}}
/// {"event":"input","at":81234,"input":{"start":"12","properties":{"application.name":"mpv"},"player":"org.mpris.MediaPlayer2.mpv"}}
/// ```
///
/// `at` is the daemon's clock (milliseconds since it started, the engine's `now`) on every published
/// line; `input` lines carry each event the engine was given, in fixture words (``FixtureEvent``),
/// which is what `audio-policyd record` writes down.
///
/// A connection that claimed Now Playing gets, whether it subscribed or not, what is asked of it:
///
/// ```json
/// {"event":"pause","index":12,"token":"claim-3"}
/// {"event":"resume","index":12,"token":"claim-3"}
/// {"event":"command","command":"PlayPause","token":"claim-3"}
/// ```
///
/// A connection whose `begin` waited for a call to end gets, when it begins:
///
/// ```json
/// {"event":"began","token":"hook-2-1"}
/// ```
public struct ControlEvent: Codable, Hashable, Sendable {
    /// A player on the session bus, as `player` events show it.
    public struct Player: Codable, Hashable, Sendable {
        /// The MPRIS bus name.
        public var name: String
        public var identity: String?
        public var pid: Int?
        /// `Playing`, `Paused`, `Stopped`, or absent when not known yet.
        public var status: String?
        /// False once the player has left the bus.
        public var present: Bool

        /// Every field, like the memberwise initializer (which is internal to this module).
        package init(name: String, identity: String? = nil, pid: Int? = nil, status: String? = nil, present: Bool) {
            self.name = name
            self.identity = identity
            self.pid = pid
            self.status = status
            self.present = present
        }
    }

    /// A decision, as `decision` events show it.
    public struct DecisionInfo: Codable, Hashable, Sendable {
        public var stream: String
        public var application: String
        public var `class`: String
        public var reason: String
        public var action: String
        /// `acted` (something was done to the stream), `classified` (it started) or `measured` (its meter
        /// spoke): what a client may filter on without reading `action`'s words.
        public var kind: Decision.Kind? = nil

        /// Every field, like the memberwise initializer (which is internal to this module).
        package init(
            stream: String, application: String, `class`: String, reason: String, action: String, kind: Decision.Kind? = nil
        ) {
            self.stream = stream
            self.application = application
            self.`class` = `class`
            self.reason = reason
            self.action = action
            self.kind = kind
        }
    }

    /// What an event line is about: its `event`, the wire name the raw value.
    public enum Kind: WireName {
        case stream
        case nowPlaying
        case decision
        case player
        case input
        /// To a claim: pause the stream.
        case pause
        /// To a claim: resume the stream.
        case resume
        /// To a claim: a remote control's command.
        case command
        /// To a hook: its interruption, which waited for a call to end, began.
        case began
        /// A kind this side does not know (a newer daemon's, or a subscriber's typo).
        case unknown(String)

        public static let known: [Kind] = [.stream, .nowPlaying, .decision, .player, .input, .pause, .resume, .command,
                                           .began]
        /// The kinds a subscriber may ask for (a claim gets `pause`, `resume` and `command` unasked).
        public static let subscribable: [Kind] = [.stream, .nowPlaying, .decision, .player, .input]
        /// What `subscribe` without `events` gets: every kind but `input`, which is for recorders.
        public static let defaults: [Kind] = [.stream, .nowPlaying, .decision, .player]

        public var rawValue: String {
            switch self {
            case .stream: "stream"
            case .nowPlaying: "now-playing"
            case .decision: "decision"
            case .player: "player"
            case .input: "input"
            case .pause: "pause"
            case .resume: "resume"
            case .command: "command"
            case .began: "began"
            case let .unknown(name): name
            }
        }
    }

    public var event: Kind
    public var stream: StatusReport.Stream?
    public var nowPlaying: StatusReport.Owner?
    public var decision: DecisionInfo?
    public var player: Player?
    /// `pause` / `resume`: the stream (sink input index) to pause or resume.
    public var index: UInt32?
    /// `command`: the MPRIS method a remote control asked for (`PlayPause`, `Next`, …).
    public var command: String?
    /// `pause` / `resume` / `command`: the claim it is addressed to; `began`: the hook's interruption.
    public var token: String?
    /// When it happened, on the daemon's clock (ms since it started).
    public var at: Int?
    /// `input`: what the engine was told.
    public var input: FixtureEvent?

    public init(event: Kind, stream: StatusReport.Stream? = nil, nowPlaying: StatusReport.Owner? = nil,
                decision: DecisionInfo? = nil, player: Player? = nil, index: UInt32? = nil,
                command: String? = nil, token: String? = nil, at: Int? = nil, input: FixtureEvent? = nil) {
        self.event = event
        self.stream = stream
        self.nowPlaying = nowPlaying
        self.decision = decision
        self.player = player
        self.index = index
        self.command = command
        self.token = token
        self.at = at
        self.input = input
    }

    private enum CodingKeys: String, CodingKey {
        case event, stream, nowPlaying, decision, player, index, command, token, at, input
    }

    /// Encodes `nowPlaying` as an explicit null for a `now-playing` event with no owner.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(event, forKey: .event)
        try container.encodeIfPresent(stream, forKey: .stream)
        if event == .nowPlaying { try container.encode(nowPlaying, forKey: .nowPlaying) } else {
            try container.encodeIfPresent(nowPlaying, forKey: .nowPlaying)
        }
        try container.encodeIfPresent(decision, forKey: .decision)
        try container.encodeIfPresent(player, forKey: .player)
        try container.encodeIfPresent(index, forKey: .index)
        try container.encodeIfPresent(command, forKey: .command)
        try container.encodeIfPresent(token, forKey: .token)
        try container.encodeIfPresent(at, forKey: .at)
        try container.encodeIfPresent(input, forKey: .input)
    }
}
