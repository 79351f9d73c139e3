/// A scenario to replay against the engine with a virtual clock (`audio-policyd test`).
///
/// Format (TOML): optional `description`, optional `policy` (path relative to the fixture file;
/// absent means the embedded default), then `[[event]]` and `[[expect]]` tables in time order, each
/// with `at` in milliseconds from the start. docs/fixtures.md lists every key.
public struct Fixture: Sendable {
    public var file: String
    public var description: String?
    /// The `policy` key as written (relative to the fixture file), if any.
    public var policyPath: String?
    /// Events and expectations in the order they run: by `at`, then file order.
    public var steps: [FixtureStep]
    /// `players-obey-pause`: whether the replay's players report Paused the moment the engine pauses them
    /// (true, the default: what a hand-written fixture means by a player), or only when a `paused` event
    /// says so (false: what a recording and the property tests write, since they carry every report).
    /// A player that has not reported Paused within the policy's `pause-timeout` is muted instead.
    public var playersObeyPause: Bool
    /// A levels fixture's scenario (a top-level `server` key): it is played by ``LevelsRehearsal``, not
    /// the engine, and ``steps`` is empty.
    public var levels: LevelsScenario?

    /// The policies its `reload` steps name, as written, each once.
    public var reloadPaths: [String] {
        var paths: [String] = []
        for step in steps {
            if case let .reload(path) = step.action, !paths.contains(path) { paths.append(path) }
        }
        return paths
    }

    public init(file: String, description: String?, policyPath: String?, steps: [FixtureStep],
                playersObeyPause: Bool = true) {
        self.file = file
        self.description = description
        self.policyPath = policyPath
        self.steps = steps
        self.playersObeyPause = playersObeyPause
    }
}

/// One `[[event]]` or `[[expect]]` of a fixture.
public struct FixtureStep: Sendable {
    public enum Action: Sendable {
        case event(Event)
        case expect(Expectation)
        /// `reload = "PATH"`: the policy at PATH (relative to the fixture file, or absolute; `<embedded
        /// default>` for the built-in one) replaces the one in force (``Event/policyReplaced(_:)``).
        case reload(String)
    }

    public var at: Milliseconds
    /// Where the table starts (its `[[event]]` / `[[expect]]` header).
    public var location: SourceLocation
    public var action: Action

    public init(at: Milliseconds, location: SourceLocation, action: Action) {
        self.at = at
        self.location = location
        self.action = action
    }
}

/// What an `[[expect]]` table asserts.
public enum Expectation: Hashable, Sendable {
    /// `stream = "ID"` with any of `state`, `volume` (policy factor, ±0.01), `muted`.
    case stream(StreamID, state: StreamState?, volume: Double?, muted: Bool?)
    /// `now-playing = "ID"`, or `""` for none.
    case nowPlaying(StreamID?)
    /// `stream = "ID"` with `sent` and/or `not-sent` (``SentCommand/names``): which commands the engine
    /// sent for the stream at this moment (by any event or deadline at the same `at` before this table),
    /// and which it did not.
    case sent(StreamID, sent: [String], notSent: [String])
}
