import TOMLKit

/// Loads a levels fixture (one with a top-level `server`), rejecting a bad one with every error found,
/// each at its `file:line:column`: ``LevelsScenario``.
///
/// ```toml
/// description = "a duck saved by the server is not the next stream's own level"
/// server = "pulseaudio"                              # or "pipewire" (WirePlumber's saving)
///
/// [[saved]]                                          # optional: the entries before the first step
/// key = "sink-input-by-media-role:music"
/// level = 0.8                                        # linear; or per channel: [1.0, 0.6]
///
/// [[event]]
/// at = 0
/// start = "music"
/// key = "sink-input-by-media-role:music"             # its stream-restore key
///
/// [[expect]]
/// at = 100
/// saved = "sink-input-by-media-role:music"           # or stream = "music" (with `own`)
/// level = 0.8
/// muted = false
/// ```
enum LevelsFixtureLoader {
    static let verbs = ["start", "duck", "restore", "fade-out", "hold", "unmute", "user-level", "user-mute", "move",
                        "end", "kill", "restart", "volume-arrives"]
    static let options: [String: (required: [String], optional: [String])] = [
        "start": (["key"], ["level", "muted", "before-writes-applied", "volume-late", "killed-as-it-starts",
                            "writes-unreported"]),
        "duck": (["to"], ["steps"]),
        "restore": ([], ["steps"]),
        "user-level": (["level"], []),
        "user-mute": (["muted"], []),
        "end": ([], ["last-write-lost"]),
        "volume-arrives": ([], ["restored-now"]),
    ]
    static let optionKeys = ["key", "level", "muted", "before-writes-applied", "volume-late", "killed-as-it-starts",
                             "writes-unreported", "to", "steps",
                             "last-write-lost", "restored-now"]

    static func load(_ root: TOMLTable, _ reader: TOMLReader, file: String) throws(LocatedErrors) -> Fixture {
        reader.checkKeys(root, at: .root, allowed: ["description", "server", "saved", "event", "expect"],
                         in: "the levels fixture")
        let description = reader.string(root, "description", at: .root)
        var saving = ServerSaving.pulseAudio
        if let name = reader.string(root, "server", at: .root) {
            if let known = ServerSaving(rawValue: name) {
                saving = known
            } else {
                reader.fail(reader.map.keyLocation([.key("server")]),
                            "`server` must be \"pulseaudio\" or \"pipewire\", got \"\(name)\"")
            }
        }
        var entries: [(key: String, level: ChannelVolumes, muted: Bool)] = []
        var steps: [LevelsScenario.Step] = []
        for (name, index, table, path, location) in tables(root, reader) {
            switch name {
            case "saved":
                reader.checkKeys(table, at: path, allowed: ["key", "level", "muted"], in: "[[saved]]")
                let key = reader.string(table, "key", at: path)
                let level = readLevel(table, at: path, reader)
                if key == nil || level == nil { reader.fail(location, "[[saved]] needs `key` and `level`") }
                if let key, let level {
                    entries.append((key, level, reader.bool(table, "muted", at: path) ?? false))
                }
            case "event":
                let at = readAt(table, path, location, reader)
                if let action = readEvent(table, at: path, location: location, reader), let at {
                    steps.append(.init(at: at, location: location, action: action))
                }
            default:
                let at = readAt(table, path, location, reader)
                if let action = readExpectation(table, at: path, location: location, reader), let at {
                    steps.append(.init(at: at, location: location, action: action))
                }
            }
            _ = index
        }
        // Only pipewire-pulse tells a volume late.
        for step in steps where saving == .pulseAudio {
            if case .start(_, _, _, _, _, true, _, _) = step.action {
                reader.fail(step.location, "`volume-late` is pipewire-pulse's: it goes with server = \"pipewire\"")
            }
        }
        try reader.throwIfFailed()
        let ordered = steps.enumerated().sorted { lhs, rhs in
            (lhs.element.at, lhs.element.location.line, lhs.offset) < (rhs.element.at, rhs.element.location.line, rhs.offset)
        }.map(\.element)
        var fixture = Fixture(file: file, description: description, policyPath: nil, steps: [])
        fixture.levels = LevelsScenario(saving: saving, entries: entries, steps: ordered)
        return fixture
    }

    private static func tables(_ root: TOMLTable, _ reader: TOMLReader)
        -> [(String, Int, TOMLTable, TOMLKeyPath, SourceLocation)] {
        var found: [(String, Int, TOMLTable, TOMLKeyPath, SourceLocation)] = []
        for key in ["saved", "event", "expect"] {
            guard let array = reader.array(root, key, at: .root,
                                           expected: "`\(key)` must be an array of tables, written [[\(key)]]")
            else { continue }
            for (index, element) in array.enumerated() {
                let path: TOMLKeyPath = [.key(key)]
                let location = reader.map.tableLocation(path.appending(index))
                guard let table = element.table else {
                    reader.fail(location, "each \(key) must be a table, written [[\(key)]]")
                    continue
                }
                found.append((key, index, table, path.appending(index), location))
            }
        }
        return found
    }

    private static func readAt(_ table: TOMLTable, _ path: TOMLKeyPath, _ location: SourceLocation,
                               _ reader: TOMLReader) -> Milliseconds? {
        guard table["at"] != nil else {
            reader.fail(location, "missing `at` (ms from the start of the fixture)")
            return nil
        }
        return reader.milliseconds(table, "at", at: path)
    }

    /// `level = 0.5` (every channel; two channels) or `level = [1.0, 0.6]` (per channel), linear.
    private static func readLevel(_ table: TOMLTable, at path: TOMLKeyPath, _ reader: TOMLReader) -> ChannelVolumes? {
        guard let values = readLinear(table, "level", at: path, reader) else { return nil }
        let channels = values.count == 1 ? [values[0], values[0]] : values
        return ChannelVolumes(values: channels.map { CubicVolume.raw(linear: $0) })
    }

    private static func readLinear(_ table: TOMLTable, _ key: String, at path: TOMLKeyPath,
                                   _ reader: TOMLReader) -> [Double]? {
        guard let value = table[key] else { return nil }
        if let array = value.array {
            let numbers = array.map { $0.double ?? $0.int.map(Double.init) }
            guard !numbers.isEmpty, numbers.count <= 32,
                  numbers.allSatisfy({ ($0 ?? -1) >= 0 && ($0 ?? .infinity) <= maxLevel }) else {
                return reader.invalid(path.appending(key),
                                      "`\(key)` must be a level (linear, 0 up to \(maxLevel)) or a list of at most 32")
            }
            return numbers.compactMap { $0 }
        }
        guard let number = reader.number(table, key, at: path) else { return nil }
        guard number >= 0, number <= maxLevel else {
            return reader.invalid(path.appending(key), "`\(key)` must be a level from 0 up to \(maxLevel) (linear)")
        }
        return [number]
    }

    /// The loudest level a fixture may name: a server's maximum is about 11.4 (PA_VOLUME_MAX, cubic).
    static let maxLevel = 10.0

    /// `steps = N`: how many writes a ramp takes, 1 to 1,000.
    private static func readSteps(_ table: TOMLTable, at path: TOMLKeyPath, _ reader: TOMLReader) -> Int? {
        guard let value = table["steps"] else { return 1 }
        guard let count = value.int, (1...1000).contains(count) else {
            return reader.invalid(path.appending("steps"), "`steps` must be a whole number from 1 to 1000")
        }
        return count
    }

    private static func readEvent(_ table: TOMLTable, at path: TOMLKeyPath, location: SourceLocation,
                                  _ reader: TOMLReader) -> LevelsScenario.Action? {
        reader.checkKeys(table, at: path, allowed: ["at"] + verbs + optionKeys, in: "[[event]]")
        let present = verbs.filter { table[$0] != nil }
        guard present.count == 1, let verb = present.first else {
            reader.fail(location, present.isEmpty
                ? "event needs one of \(verbs.map { "`\($0)`" }.joined(separator: ", "))"
                : "event has \(present.map { "`\($0)`" }.joined(separator: " and ")); an event does one thing")
            return nil
        }
        let allowed = options[verb] ?? ([], [])
        for key in optionKeys where table[key] != nil && !allowed.required.contains(key) && !allowed.optional.contains(key) {
            reader.fail(reader.map.keyLocation(path.appending(key)), "`\(key)` does not go with `\(verb)`")
        }
        for key in allowed.required where table[key] == nil { reader.fail(location, "`\(verb)` needs `\(key)`") }
        guard let name = reader.string(table, verb, at: path) else { return nil }
        let steps = table["steps"] == nil ? 1 : readSteps(table, at: path, reader)
        switch verb {
        case "start":
            guard let key = reader.string(table, "key", at: path) else { return nil }
            return .start(name, key: key, level: readLevel(table, at: path, reader),
                          muted: reader.bool(table, "muted", at: path) ?? false,
                          beforeWritesApplied: reader.bool(table, "before-writes-applied", at: path) ?? false,
                          volumeLate: reader.bool(table, "volume-late", at: path) ?? false,
                          killedAsItStarts: reader.bool(table, "killed-as-it-starts", at: path) ?? false,
                          writesUnreported: reader.bool(table, "writes-unreported", at: path) ?? false)
        case "duck":
            guard let to = reader.number(table, "to", at: path), let steps else { return nil }
            guard to.isFinite, to >= 0, to < 1 else {
                return reader.invalid(path.appending("to"), "`to` must be from 0 up to 1 (a duck)")
            }
            return .ramp(name, to: to, steps: steps)
        case "restore":
            return steps.map { .ramp(name, to: 1, steps: $0) }
        case "fade-out": return .fadeOut(name)
        case "hold": return .hold(name)
        case "unmute": return .unmute(name)
        case "user-level":
            return readLevel(table, at: path, reader).map { .userLevel(name, $0) }
        case "user-mute":
            return reader.bool(table, "muted", at: path).map { .userMute(name, $0) }
        case "move": return .move(name)
        case "volume-arrives":
            return .volumeArrives(name, restoredNow: reader.bool(table, "restored-now", at: path) ?? false)
        case "end":
            return .end(name, lastWriteLost: reader.bool(table, "last-write-lost", at: path) ?? false)
        case "kill":
            guard name == "daemon" else { return reader.invalid(path.appending(verb), "`kill` takes \"daemon\"") }
            return .killDaemon
        default:
            switch name {
            case "daemon": return .startDaemon
            case "server": return .restartServer
            default: return reader.invalid(path.appending(verb), "`restart` takes \"daemon\" or \"server\"")
            }
        }
    }

    private static func readExpectation(_ table: TOMLTable, at path: TOMLKeyPath, location: SourceLocation,
                                        _ reader: TOMLReader) -> LevelsScenario.Action? {
        reader.checkKeys(table, at: path, allowed: ["at", "saved", "stream", "level", "own", "muted"], in: "[[expect]]")
        let level = readLinear(table, "level", at: path, reader)
        let own = readLinear(table, "own", at: path, reader)
        let muted = reader.bool(table, "muted", at: path)
        if let key = reader.string(table, "saved", at: path) {
            if table["own"] != nil { reader.fail(reader.map.keyLocation(path.appending("own")), "`own` goes with `stream`") }
            return .expectSaved(key, level: level, muted: muted)
        }
        if let name = reader.string(table, "stream", at: path) {
            return .expectStream(name, level: level, own: own, muted: muted)
        }
        reader.fail(location, "an expectation needs `saved = KEY` or `stream = ID`")
        return nil
    }
}
