/// An engine ``Event`` in a fixture's words: the verb and the keys of its `[[event]]` table.
///
/// The inverse of what ``FixtureLoader`` reads, so that anything that saw events — the property tests'
/// shrinker, `audio-policyd record` listening to the daemon — can write them down as a fixture that
/// `audio-policyd test` replays. On the control socket (`input` events) it travels as the same table in
/// JSON: `{"start":"12","properties":{"media.role":"music"},"player":"org.mpris.MediaPlayer2.mpv"}`.
///
/// ```swift
/// FixtureEvent(.userVolume("12", 0.5))?.tomlLines  // ["volume = \"12\"", "level = 0.5"]
/// ```
public struct FixtureEvent: Hashable, Sendable {
    /// The verb (`start`, `end`, `volume`, …), one of ``FixtureLoader/eventVerbs``.
    public var verb: String
    /// The stream, token or player the verb names (for `stop`, the fade: `"200 ms"`).
    public var id: String
    public var properties: Properties?
    public var player: String?
    public var level: Double?
    public var muted: Bool?
    public var className: String?
    /// `start`: the stream was created corked; `capture`: its app holds the capture corked (`corked = true`).
    public var corked: Bool?
    /// `capture` only: it records a sink's monitor, not an input (`monitor = true`).
    public var monitor: Bool?
    /// `start` only: an earlier run held it muted for a lost output (`held = true`).
    public var held: Bool?
    /// `move` only: the output the stream plays on now.
    public var to: String?
    /// `output` only: its active port, as `{ name, type, available }`.
    public var port: Properties?
    /// `saved-start` only: it started away from its own level, at one of our saved ones (`level-away = true`).
    public var levelAway: Bool?
    /// `saved-start` only: its mute is our saved one, not its user's (`muted-by-us = true`).
    public var mutedByUs: Bool?
    /// `volume` only: a volume write of ours still on its way lands after the change (`overtakes-our-write = true`).
    public var overtakesOurWrite: Bool?

    public init(verb: String, id: String, properties: Properties? = nil, player: String? = nil,
                level: Double? = nil, muted: Bool? = nil, className: String? = nil, corked: Bool? = nil,
                held: Bool? = nil, to: String? = nil, port: Properties? = nil, monitor: Bool? = nil,
                levelAway: Bool? = nil, mutedByUs: Bool? = nil, overtakesOurWrite: Bool? = nil) {
        self.verb = verb
        self.id = id
        self.properties = properties
        self.player = player
        self.level = level
        self.muted = muted
        self.className = className
        self.corked = corked
        self.held = held
        self.to = to
        self.port = port
        self.monitor = monitor
        self.levelAway = levelAway
        self.mutedByUs = mutedByUs
        self.overtakesOurWrite = overtakesOurWrite
    }

    /// The event in fixture words; nil for ``Event/tick``, which fixtures never spell (the runner ticks
    /// at every deadline itself).
    public init?(_ event: Event) {
        func nonEmpty(_ properties: Properties) -> Properties? { properties.isEmpty ? nil : properties }
        switch event {
        case let .streamStarted(id, properties, player, playing, muted, held, output):
            self.init(verb: "start", id: id.rawValue, properties: nonEmpty(properties), player: player?.rawValue,
                      muted: muted ? true : nil, corked: playing ? nil : true, held: held ? true : nil,
                      to: output?.rawValue)
        case let .startedAtOurSave(id, levelAway, mutedByUs):
            self.init(verb: "saved-start", id: id.rawValue, levelAway: levelAway ? true : nil, mutedByUs: mutedByUs ? true : nil)
        case let .levelTold(id, muted): self.init(verb: "level-told", id: id.rawValue, muted: muted ? true : nil)
        case let .streamEnded(id): self.init(verb: "end", id: id.rawValue)
        case let .streamChanged(id, properties): self.init(verb: "change", id: id.rawValue, properties: properties)
        case let .userVolume(id, level, overtakes):
            self.init(verb: "volume", id: id.rawValue, level: level, overtakesOurWrite: overtakes ? true : nil)
        case let .userMute(id, muted): self.init(verb: "mute", id: id.rawValue, muted: muted)
        case let .playback(id, playing): self.init(verb: playing ? "playing" : "paused", id: id.rawValue)
        case let .interruptionBegan(token, className, properties):
            self.init(verb: "interrupt", id: token.rawValue, properties: nonEmpty(properties), className: className)
        case let .interruptionAfterCall(token, className, properties):
            self.init(verb: "interrupt-after-call", id: token.rawValue, properties: nonEmpty(properties), className: className)
        case let .interruptionEnded(token): self.init(verb: "release", id: token.rawValue)
        case let .playerChanged(id, player): self.init(verb: "player-changed", id: id.rawValue, player: player?.rawValue)
        case let .pauseIgnored(id): self.init(verb: "pause-ignored", id: id.rawValue)
        case let .playerGone(player): self.init(verb: "player-gone", id: player.rawValue)
        case let .playerStatus(player, status):
            self.init(verb: FixtureLoader.playerStatusVerb(status), id: player.rawValue)
        case let .nowPlayingClaimed(token, properties, player):
            self.init(verb: "claim", id: token.rawValue, properties: nonEmpty(properties), player: player?.rawValue)
        case let .audibility(id, audible): self.init(verb: audible ? "audible" : "silent", id: id.rawValue)
        case let .measuring(id): self.init(verb: "measuring", id: id.rawValue)
        case let .capture(id, properties, monitor, corked):
            self.init(verb: "capture", id: id.rawValue, properties: nonEmpty(properties), corked: corked ? true : nil,
                      monitor: monitor ? true : nil)
        case let .captureEnded(id): self.init(verb: "capture-end", id: id.rawValue)
        case let .stop(fade): self.init(verb: "stop", id: "\(fade) ms")
        case let .output(id, output):
            self.init(verb: "output", id: id.rawValue, properties: nonEmpty(output.properties),
                      port: output.port.map(Self.table(of:)))
        case let .outputRemoved(id): self.init(verb: "output-gone", id: id.rawValue)
        case let .streamMoved(id, output): self.init(verb: "move", id: id.rawValue, to: output.rawValue)
        case let .focus(app): self.init(verb: "focus", id: app?.description ?? FixtureLoader.noFocus)
        case let .windowClosed(app): self.init(verb: "window-closed", id: app.description)
        case let .lastWindowClosed(app): self.init(verb: "last-window-closed", id: app.description)
        case .focusUnknown: self.init(verb: "focus-unknown", id: "source gone")
        case .serverGone: self.init(verb: "server-gone", id: "connection closed")
        case let .policyReplaced(policy): self.init(verb: "reload", id: policy.source)
        case .tick: return nil
        }
    }

    /// The body of its `[[event]]` table (without `at`), one `key = value` per line, verb first.
    public var tomlLines: [String] {
        var lines = ["\(verb) = \(Self.quote(id))"]
        if let className { lines.append("class = \(Self.quote(className))") }
        if let level { lines.append("level = \(level)") }
        if let muted { lines.append("muted = \(muted)") }
        if let properties { lines.append("properties = \(Self.table(properties))") }
        if let player { lines.append("player = \(Self.quote(player))") }
        if let corked { lines.append("corked = \(corked)") }
        if let monitor { lines.append("monitor = \(monitor)") }
        if let held { lines.append("held = \(held)") }
        if let to { lines.append("to = \(Self.quote(to))") }
        if let port { lines.append("port = \(Self.table(port))") }
        if let levelAway { lines.append("level-away = \(levelAway)") }
        if let mutedByUs { lines.append("muted-by-us = \(mutedByUs)") }
        if let overtakesOurWrite { lines.append("overtakes-our-write = \(overtakesOurWrite)") }
        return lines
    }

    /// A port as its fixture table: `{ name, type, available }`.
    static func table(of port: OutputPort) -> Properties {
        ["name": port.name, "type": port.type, "available": port.available.rawValue]
    }

    /// A TOML basic string (``TOMLString/quoted(_:)``).
    public static func quote(_ text: String) -> String { TOMLString.quoted(text) }

    /// An inline TOML table of properties, keys sorted, every key quoted (property names have dots).
    public static func table(_ properties: Properties) -> String {
        "{ " + properties.keys.sorted().map { "\(quote($0)) = \(quote(properties[$0]!))" }.joined(separator: ", ") + " }"
    }
}

extension FixtureEvent: Codable {
    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// The fixture table as a JSON object: the verb is the key that names the stream.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(id, forKey: Key(verb))
        try container.encodeIfPresent(properties, forKey: Key("properties"))
        try container.encodeIfPresent(player, forKey: Key("player"))
        try container.encodeIfPresent(level, forKey: Key("level"))
        try container.encodeIfPresent(muted, forKey: Key("muted"))
        try container.encodeIfPresent(className, forKey: Key("class"))
        try container.encodeIfPresent(corked, forKey: Key("corked"))
        try container.encodeIfPresent(held, forKey: Key("held"))
        try container.encodeIfPresent(to, forKey: Key("to"))
        try container.encodeIfPresent(port, forKey: Key("port"))
        try container.encodeIfPresent(monitor, forKey: Key("monitor"))
        try container.encodeIfPresent(levelAway, forKey: Key("level-away"))
        try container.encodeIfPresent(mutedByUs, forKey: Key("muted-by-us"))
        try container.encodeIfPresent(overtakesOurWrite, forKey: Key("overtakes-our-write"))
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        let verbs = container.allKeys.map(\.stringValue).filter { FixtureLoader.eventVerbs.contains($0) }
        guard verbs.count == 1, let verb = verbs.first else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "an input event needs exactly one verb, got \(verbs)"))
        }
        self.init(verb: verb, id: try container.decode(String.self, forKey: Key(verb)),
                  properties: try container.decodeIfPresent(Properties.self, forKey: Key("properties")),
                  player: try container.decodeIfPresent(String.self, forKey: Key("player")),
                  level: try container.decodeIfPresent(Double.self, forKey: Key("level")),
                  muted: try container.decodeIfPresent(Bool.self, forKey: Key("muted")),
                  className: try container.decodeIfPresent(String.self, forKey: Key("class")),
                  corked: try container.decodeIfPresent(Bool.self, forKey: Key("corked")),
                  held: try container.decodeIfPresent(Bool.self, forKey: Key("held")),
                  to: try container.decodeIfPresent(String.self, forKey: Key("to")),
                  port: try container.decodeIfPresent(Properties.self, forKey: Key("port")),
                  monitor: try container.decodeIfPresent(Bool.self, forKey: Key("monitor")),
                  levelAway: try container.decodeIfPresent(Bool.self, forKey: Key("level-away")),
                  mutedByUs: try container.decodeIfPresent(Bool.self, forKey: Key("muted-by-us")),
                  overtakesOurWrite: try container.decodeIfPresent(Bool.self, forKey: Key("overtakes-our-write")))
    }
}
