import TOMLKit

/// Loads a ``Fixture`` from TOML, rejecting a bad one with every error found, each at its `file:line:column`.
///
/// ```toml
/// description = "a navigation prompt ducks music"   # optional
/// policy = "../../policies/car.toml"                # optional, relative to this file; default: embedded
///
/// [[event]]
/// at = 0                                  # ms from the start, integer >= 0
/// start = "music"                         # a stream appears; with optional
/// properties = { "media.role" = "music" } #   its properties (strings; numbers and booleans allowed)
/// player = "org.mpris.MediaPlayer2.mpv"   #   and its MPRIS player
///
/// [[expect]]
/// at = 100
/// stream = "music"                        # then at least one of:
/// state = "playing"                       #   playing | ducked | paused | ended
/// volume = 1.0                            #   policy factor (±0.01)
/// muted = false
/// ```
///
/// An `[[event]]` has `at` and exactly one of: `start = ID` (+ `properties`, `player`), `end = ID`,
/// `volume = ID` + `level` (linear 0…1.5; + `overtakes-our-write`: a volume write of ours lands after it), `mute = ID` + `muted`, `playing = ID`, `paused = ID`,
/// `interrupt = TOKEN` + `class` (+ `properties`), `interrupt-after-call = TOKEN` + `class` (+ `properties`:
/// it begins once no call is on), `release = TOKEN`, `change = ID` + `properties`,
/// `player-gone = "org.mpris.MediaPlayer2.NAME"` (the player's app quit), `audible = ID` / `silent = ID`
/// (what the stream's monitor says), `measuring = ID` (a meter started; its verdict is pending), `capture = ID` (+ `properties`, `monitor`, `corked`: a capture stream appeared or changed; the engine decides whether its app records from a microphone),
/// `capture-end = ID`, `player-changed = ID` (+ `player`; without it the stream has no player any more),
/// `pause-ignored = ID` (its player stayed Playing after Pause), `saved-start = ID` (+ `level-away`,
/// `muted-by-us`), `level-told = ID` (+ `muted`) and `claim = TOKEN` (+ `properties`,
/// `player`: a hook claimed Now Playing), `player-playing`, `player-paused`, `player-stopped` and
/// `player-quiet` `= "org.mpris.MediaPlayer2.NAME"` (what the player says of itself: ``PlayerStatus``; a
/// player never told of counts as playing). ``FixtureEvent`` writes them.
/// An `[[expect]]` has `at` and either `stream = ID` as above, `stream = ID` with `sent` and/or `not-sent`
/// (the commands the engine sent it at that moment, by ``SentCommand``'s names), or `now-playing = ID`
/// (`""` for none).
/// Steps run by `at`; steps at the same time run in file order. Class names are checked by the runner,
/// against the policy.
public enum FixtureLoader {
    public static func load(text: String, file: String) throws(LocatedErrors) -> Fixture {
        let (root, reader) = try TOMLReader.parse(text: text, file: file)
        if root["server"] != nil { return try LevelsFixtureLoader.load(root, reader, file: file) }
        reader.checkKeys(root, at: .root, allowed: ["description", "policy", "players-obey-pause", "event", "expect"],
                         in: "the fixture")
        let description = reader.string(root, "description", at: .root)
        let policyPath = reader.string(root, "policy", at: .root)
        let playersObeyPause = reader.bool(root, "players-obey-pause", at: .root) ?? true

        var steps: [(step: FixtureStep, order: SourceLocation)] = []
        for (key, read) in [("event", readEvent), ("expect", readExpectation)] as [(String, StepReader)] {
            let arrayPath: TOMLKeyPath = [.key(key)]
            guard let array = reader.array(root, key, at: .root,
                                           expected: "`\(key)` must be an array of tables, written [[\(key)]]")
            else { continue }
            for (index, element) in array.enumerated() {
                let path = arrayPath.appending(index)
                let location = reader.map.tableLocation(path)
                guard let table = element.table else {
                    reader.fail(location, "each \(key) must be a table, written [[\(key)]], got \(TOMLReader.typeName(element))")
                    continue
                }
                let at = readAt(table, at: path, location: location, reader)
                if let action = read(table, path, location, reader), let at {
                    steps.append((FixtureStep(at: at, location: location, action: action), location))
                }
            }
        }

        try reader.throwIfFailed()
        let ordered = steps.sorted { lhs, rhs in
            (lhs.step.at, lhs.order.line, lhs.order.column) < (rhs.step.at, rhs.order.line, rhs.order.column)
        }
        return Fixture(file: file, description: description, policyPath: policyPath, steps: ordered.map(\.step),
                       playersObeyPause: playersObeyPause)
    }

    private typealias StepReader = (TOMLTable, TOMLKeyPath, SourceLocation, TOMLReader) -> FixtureStep.Action?

    static let eventVerbs = ["start", "end", "volume", "mute", "playing", "paused", "interrupt", "interrupt-after-call",
                            "release", "change",
                            "player-gone", "audible", "silent", "measuring", "capture", "capture-end",
                            "player-changed", "pause-ignored", "claim", "stop", "output", "output-gone", "move",
                            "focus", "window-closed", "last-window-closed", "focus-unknown", "server-gone", "reload", "saved-start",
                             "level-told"]
        + PlayerStatus.allCases.map(playerStatusVerb)
    /// `player-playing = "org.mpris.MediaPlayer2.NAME"` and the like: what the player says (``PlayerStatus``).
    static func playerStatusVerb(_ status: PlayerStatus) -> String { "player-\(status.rawValue)" }
    /// `focus = "none"`: no window has focus (the desktop).
    static let noFocus = "none"
    /// The keys each verb takes besides `at`; the first list is required.
    static let eventOptions: [String: (required: [String], optional: [String])] = [
        "start": ([], ["properties", "player", "corked", "muted", "held", "to"]),
        "volume": (["level"], ["overtakes-our-write"]),
        "mute": (["muted"], []),
        "interrupt": (["class"], ["properties"]),
        "interrupt-after-call": (["class"], ["properties"]),
        "change": (["properties"], []),
        "capture": ([], ["properties", "monitor", "corked"]),
        "player-changed": ([], ["player"]),
        "claim": ([], ["properties", "player"]),
        "output": ([], ["properties", "port"]),
        "move": (["to"], []),
        "saved-start": ([], ["level-away", "muted-by-us"]),
        "level-told": ([], ["muted"]),
    ]
    static let optionKeys = ["properties", "player", "level", "muted", "class", "corked", "held", "to", "port", "monitor",
                             "level-away", "muted-by-us", "overtakes-our-write"]
    static let expectKeys = ["at", "stream", "state", "volume", "muted", "sent", "not-sent", "now-playing"]

    private static func readAt(_ table: TOMLTable, at path: TOMLKeyPath, location: SourceLocation,
                               _ reader: TOMLReader) -> Milliseconds? {
        if table["at"] == nil {
            reader.fail(location, "missing `at` (ms from the start of the fixture)")
            return nil
        }
        return reader.milliseconds(table, "at", at: path)
    }
}

// MARK: - Events

extension FixtureLoader {
    private static func readEvent(_ table: TOMLTable, at path: TOMLKeyPath, location: SourceLocation,
                                  _ reader: TOMLReader) -> FixtureStep.Action? {
        let allowed = ["at"] + eventVerbs + optionKeys
        reader.checkKeys(table, at: path, allowed: allowed, in: "[[event]]")

        let verbs = eventVerbs.filter { table[$0] != nil }
        guard verbs.count == 1, let verb = verbs.first else {
            let list = eventVerbs.map { "`\($0)`" }.joined(separator: ", ")
            reader.fail(location, verbs.isEmpty
                ? "event needs one of \(list)"
                : "event has \(verbs.map { "`\($0)`" }.joined(separator: " and ")); an event does one thing")
            return nil
        }

        let options = eventOptions[verb] ?? ([], [])
        for key in optionKeys where table[key] != nil {
            if !options.required.contains(key), !options.optional.contains(key) {
                reader.fail(reader.map.keyLocation(path.appending(key)), "`\(key)` does not go with `\(verb)`")
            }
        }
        for key in options.required where table[key] == nil {
            reader.fail(location, "`\(verb)` needs `\(key)`")
        }

        // `stop` names no stream: its value is the restore fade.
        if verb == "stop" {
            return reader.duration(table, "stop", at: path).map { .event(.stop(fade: $0)) }
        }
        // Read everything the verb takes before giving up, so every error is reported.
        let id = readID(table, verb, at: path, reader).map { StreamID($0) }
        switch verb {
        case "start":
            let properties = readProperties(table, at: path, reader)
            let player = reader.string(table, "player", at: path)
            let corked = reader.bool(table, "corked", at: path)
            let muted = reader.bool(table, "muted", at: path)
            let held = reader.bool(table, "held", at: path)
            let output = table["to"] == nil ? nil : readID(table, "to", at: path, reader)
            guard let id, table["properties"] == nil || properties != nil, table["player"] == nil || player != nil,
                  table["corked"] == nil || corked != nil, table["muted"] == nil || muted != nil,
                  table["held"] == nil || held != nil, table["to"] == nil || output != nil
            else { return nil }
            return .event(.streamStarted(id, properties ?? [:], player: player.map(PlayerID.init),
                                         playing: !(corked ?? false), muted: muted ?? false, held: held ?? false,
                                         output: output.map { OutputID($0) }))
        case "volume":
            var level = reader.number(table, "level", at: path)
            if let written = level, !(0...1.5).contains(written) {
                level = reader.invalid(path.appending("level"), "`level` must be between 0 and 1.5, got \(written)")
            }
            let overtakes = reader.bool(table, "overtakes-our-write", at: path)
            guard let id, let level, table["overtakes-our-write"] == nil || overtakes != nil else { return nil }
            return .event(.userVolume(id, level, overtakesOurWrite: overtakes ?? false))
        case "mute":
            guard let muted = reader.bool(table, "muted", at: path), let id else { return nil }
            return .event(.userMute(id, muted))
        case "level-told":
            let muted = reader.bool(table, "muted", at: path)
            guard let id, table["muted"] == nil || muted != nil else { return nil }
            return .event(.levelTold(id, muted: muted ?? false))
        case "interrupt", "interrupt-after-call":
            let properties = readProperties(table, at: path, reader)
            guard let className = reader.string(table, "class", at: path), let id,
                  table["properties"] == nil || properties != nil else { return nil }
            return verb == "interrupt" ? .event(.interruptionBegan(token: id, className: className, properties ?? [:]))
                : .event(.interruptionAfterCall(token: id, className: className, properties ?? [:]))
        case "change":
            guard let properties = readProperties(table, at: path, reader), let id else { return nil }
            return .event(.streamChanged(id, properties))
        case "capture":
            let properties = readProperties(table, at: path, reader)
            let monitor = reader.bool(table, "monitor", at: path)
            let corked = reader.bool(table, "corked", at: path)
            guard let id, table["properties"] == nil || properties != nil, table["monitor"] == nil || monitor != nil,
                  table["corked"] == nil || corked != nil else { return nil }
            return .event(.capture(id, properties ?? [:], monitor: monitor ?? false, corked: corked ?? false))
        case "player-changed":
            let player = reader.string(table, "player", at: path)
            guard let id, table["player"] == nil || player != nil else { return nil }
            return .event(.playerChanged(id, player.map(PlayerID.init)))
        case "output":
            let properties = readProperties(table, at: path, reader)
            let port = readPort(table, at: path, reader)
            guard let id, table["properties"] == nil || properties != nil, table["port"] == nil || port != nil
            else { return nil }
            return .event(.output(OutputID(id.rawValue), Output(properties: properties ?? [:], port: port)))
        case "focus", "window-closed", "last-window-closed":
            guard let id else { return nil }
            if verb == "focus", id.rawValue == noFocus { return .event(.focus(nil)) }
            guard let app = AppIdentity(parsing: id.rawValue) else {
                return reader.invalid(path.appending(verb), "`\(verb)` needs an app: a pid, a name or \"PID (NAME)\"")
            }
            switch verb {
            case "focus": return .event(.focus(app))
            case "window-closed": return .event(.windowClosed(app))
            default: return .event(.lastWindowClosed(app))
            }
        case "reload":
            guard let id else { return nil }
            return .reload(id.rawValue)
        case "move":
            guard let to = readID(table, "to", at: path, reader), let id else { return nil }
            return .event(.streamMoved(id, to: OutputID(to)))
        case "saved-start":
            let levelAway = reader.bool(table, "level-away", at: path)
            let mutedByUs = reader.bool(table, "muted-by-us", at: path)
            guard let id, table["level-away"] == nil || levelAway != nil, table["muted-by-us"] == nil || mutedByUs != nil
            else { return nil }
            return .event(.startedAtOurSave(id, levelAway: levelAway ?? false, mutedByUs: mutedByUs ?? false))
        case "claim":
            let properties = readProperties(table, at: path, reader)
            let player = reader.string(table, "player", at: path)
            guard let id, table["properties"] == nil || properties != nil, table["player"] == nil || player != nil
            else { return nil }
            return .event(.nowPlayingClaimed(id, properties ?? [:], player: player.map(PlayerID.init)))
        default:
            guard let id else { return nil }
            switch verb {
            case "end": return .event(.streamEnded(id))
            case "playing", "paused": return .event(.playback(id, playing: verb == "playing"))
            case "release": return .event(.interruptionEnded(token: id))
            case "player-gone": return .event(.playerGone(PlayerID(id.rawValue)))
            case "audible", "silent": return .event(.audibility(id, audible: verb == "audible"))
            case "measuring": return .event(.measuring(id))
            case "capture-end": return .event(.captureEnded(id))
            case "pause-ignored": return .event(.pauseIgnored(id))
            case "output-gone": return .event(.outputRemoved(OutputID(id.rawValue)))
            case "focus-unknown": return .event(.focusUnknown)
            case "server-gone": return .event(.serverGone)
            default:
                guard let status = PlayerStatus.allCases.first(where: { playerStatusVerb($0) == verb }) else { return nil }
                return .event(.playerStatus(PlayerID(id.rawValue), status))
            }
        }
    }

    /// The stream or token a verb names: a non-empty string.
    private static func readID(_ table: TOMLTable, _ key: String, at path: TOMLKeyPath,
                               _ reader: TOMLReader) -> String? {
        guard let id = reader.string(table, key, at: path) else { return nil }
        guard !id.isEmpty else { return reader.invalid(path.appending(key), "`\(key)` needs a stream id, got \"\"") }
        return id
    }

    /// `port = { name = "analog-output-headphones", type = "headphones", available = "no" }`: an output's
    /// active port (`type` defaults to `unknown`, `available` to `unknown`: yes | no | unknown).
    private static func readPort(_ table: TOMLTable, at path: TOMLKeyPath, _ reader: TOMLReader) -> OutputPort? {
        let portPath = path.appending("port")
        guard let port = reader.table(table, "port", at: path,
                                      expected: "`port` must be a table like { name = \"analog-output-headphones\", type = \"headphones\", available = \"yes\" }")
        else { return nil }
        reader.checkKeys(port, at: portPath, allowed: ["name", "type", "available"], in: "`port`")
        guard let name = reader.string(port, "name", at: portPath) else {
            if port["name"] == nil { reader.fail(reader.map.valueLocation(portPath), "`port` needs a `name`") }
            return nil
        }
        let type = reader.string(port, "type", at: portPath) ?? "unknown"
        var available = OutputPort.Availability.unknown
        if let written = reader.string(port, "available", at: portPath) {
            guard let known = OutputPort.Availability(rawValue: written) else {
                return reader.invalid(portPath.appending("available"),
                                      "`available` must be \"yes\", \"no\" or \"unknown\", got \"\(written)\"")
            }
            available = known
        }
        return OutputPort(name: name, type: type, available: available)
    }

    /// `properties = { "media.role" = "music", ... }`; numbers and booleans become their text.
    private static func readProperties(_ table: TOMLTable, at path: TOMLKeyPath,
                                       _ reader: TOMLReader) -> Properties? {
        let propertiesPath = path.appending("properties")
        guard let properties = reader.table(table, "properties", at: path,
                                            expected: "`properties` must be a table like { \"media.role\" = \"music\" }")
        else { return nil }
        var result: Properties = [:]
        var valid = true
        for key in reader.keys(of: properties, at: propertiesPath) {
            guard let value = properties[key] else { continue }
            let keyPath = propertiesPath.appending(key)
            if let string = value.string {
                result[key] = string
            } else if let int = value.int {
                result[key] = String(int)
            } else if let double = value.double {
                result[key] = String(double)
            } else if let bool = value.bool {
                result[key] = String(bool)
            } else if value.table != nil {
                valid = false
                reader.fail(reader.map.keyLocation(keyPath),
                            "`\(key)` in `properties` is a table; quote property names that contain dots, as in \"media.role\" = \"music\"")
            } else {
                valid = false
                reader.fail(reader.map.valueLocation(keyPath),
                            "property values must be strings, got \(TOMLReader.typeName(value))")
            }
        }
        return valid ? result : nil
    }
}

// MARK: - Expectations

extension FixtureLoader {
    private static func readExpectation(_ table: TOMLTable, at path: TOMLKeyPath, location: SourceLocation,
                                        _ reader: TOMLReader) -> FixtureStep.Action? {
        reader.checkKeys(table, at: path, allowed: expectKeys, in: "[[expect]]")
        switch (table["stream"] != nil, table["now-playing"] != nil) {
        case (true, true):
            reader.fail(location, "expect has `stream` and `now-playing`; write two [[expect]] tables")
            return nil
        case (false, false):
            reader.fail(location, "expect needs `stream` or `now-playing`")
            return nil
        case (false, true):
            for key in ["state", "volume", "muted", "sent", "not-sent"] where table[key] != nil {
                reader.fail(reader.map.keyLocation(path.appending(key)), "`\(key)` does not go with `now-playing`")
            }
            guard let id = reader.string(table, "now-playing", at: path) else { return nil }
            return .expect(.nowPlaying(id.isEmpty ? nil : StreamID(id)))
        case (true, false) where table["sent"] != nil || table["not-sent"] != nil:
            for key in ["state", "volume", "muted"] where table[key] != nil {
                reader.fail(reader.map.keyLocation(path.appending(key)),
                            "`\(key)` does not go with `sent` or `not-sent`; write two [[expect]] tables")
            }
            let id = readID(table, "stream", at: path, reader)
            let sent = readCommandNames(table, "sent", at: path, reader)
            let notSent = readCommandNames(table, "not-sent", at: path, reader)
            guard let id, let sent, let notSent else { return nil }
            return .expect(.sent(StreamID(id), sent: sent, notSent: notSent))
        case (true, false):
            guard ["state", "volume", "muted"].contains(where: { table[$0] != nil }) else {
                reader.fail(location, "expect for a stream needs `state`, `volume`, `muted`, `sent` or `not-sent`")
                return nil
            }
            let id = readID(table, "stream", at: path, reader)
            var state: StreamState?
            if let written = reader.string(table, "state", at: path) {
                state = StreamState(rawValue: written)
                if state == nil {
                    let states = StreamState.allCases.map(\.rawValue)
                    let hint = closest(to: written, in: states).map { " (did you mean \"\($0)\"?)" } ?? ""
                    reader.fail(reader.map.valueLocation(path.appending("state")),
                                "unknown state \"\(written)\"\(hint); states: \(states.joined(separator: ", "))")
                }
            }
            var volume = reader.number(table, "volume", at: path)
            if let written = volume, written < 0 {
                volume = reader.invalid(path.appending("volume"), "`volume` must not be negative, got \(written)")
            }
            let muted = reader.bool(table, "muted", at: path)
            guard let id, table["state"] == nil || state != nil, table["volume"] == nil || volume != nil,
                  table["muted"] == nil || muted != nil else { return nil }
            return .expect(.stream(StreamID(id), state: state, volume: volume, muted: muted))
        }
    }

    /// `sent` or `not-sent`: a command's name (``SentCommand/names``) or an array of them; an absent key
    /// is an empty list, and nil means an error was recorded.
    private static func readCommandNames(_ table: TOMLTable, _ key: String, at path: TOMLKeyPath,
                                         _ reader: TOMLReader) -> [String]? {
        guard let value = table[key] else { return [] }
        let expected = "`\(key)` must be a command's name or an array of them, like [\"put-back-level\", \"adopt-level\"]"
        let written: [String]
        if let one = value.string {
            written = [one]
        } else if let many = value.array, many.allSatisfy({ $0.string != nil }), !many.isEmpty {
            written = many.compactMap(\.string)
        } else {
            return reader.mistyped(value, path.appending(key), expected)
        }
        var valid = true
        for name in written where !SentCommand.names.contains(name) {
            let hint = closest(to: name, in: SentCommand.names).map { " (did you mean \"\($0)\"?)" } ?? ""
            reader.fail(reader.map.valueLocation(path.appending(key)),
                        "unknown command \"\(name)\"\(hint); commands: \(SentCommand.names.joined(separator: ", "))")
            valid = false
        }
        return valid ? written : nil
    }
}
