/// Replays a ``Fixture`` against a fresh ``Engine`` on a virtual clock and checks its expectations.
///
/// Before each step at time `at`, every engine deadline due by then is delivered as a tick at its own
/// time, so grace times and holds end exactly when they would on a real clock.
public struct FixtureRunner: Sendable {

    /// The outcome of one fixture.
    public struct Result: Sendable {
        public var fixture: Fixture
        /// Every expectation that did not hold, in the order they ran (the ones in ``outcomes`` that failed).
        public var failures: [Failure]
        /// Every `[[expect]]`, held or not, in the order they ran: what a timeline marks.
        public var outcomes: [Outcome] = []
        public var passed: Bool { failures.isEmpty }
    }

    /// How one `[[expect]]` came out: when it was checked, on which stream, and what did not hold.
    ///
    /// Kept for every expectation, not only the failed ones, so a picture of the replay can show
    /// the checks that held too.
    public struct Outcome: Sendable {
        public var at: Milliseconds
        public var location: SourceLocation
        public var expectation: Expectation
        /// What did not hold; empty when the expectation held.
        public var failures: [Failure]
        public var held: Bool { failures.isEmpty }
        /// The stream it is about; nil for `now-playing`.
        public var stream: StreamID? {
            switch expectation {
            case let .stream(id, _, _, _), let .sent(id, _, _): id
            case .nowPlaying: nil
            }
        }
    }

    /// A moment of a replay, as an observer of ``run(_:policy:observe:)`` sees it.
    public enum Moment: Sendable {
        /// About to hand the engine `event` (``Event/tick`` for a deadline) at `at`; the engine is as the
        /// previous event left it.
        case before(Event, at: Milliseconds)
        /// The engine handled `event` at `at` and returned `commands`.
        case after(Event, at: Milliseconds, commands: [Command])
        /// An expectation was checked.
        case checked(Outcome)
    }

    /// One expectation that did not hold.
    public struct Failure: Sendable, CustomStringConvertible {
        public var location: SourceLocation
        public var subject: String
        public var expected: String
        public var got: String
        public var description: String {
            "\(location): \(subject): expected \(expected), got \(got)"
        }
    }

    /// Tolerance on `volume` expectations (linear factor).
    public static let volumeTolerance = 0.01

    /// The policies a fixture's `reload` steps name, by the path as written; a reload of one not given
    /// fails the replay at its step.
    public var reloads: [String: Policy]

    public init(reloads: [String: Policy] = [:]) {
        self.reloads = reloads
    }

    public func run(_ fixture: Fixture, policy: Policy) -> Result {
        run(fixture, policy: policy) { _, _ in }
    }

    /// Replays `fixture` as ``run(_:policy:)`` does, showing `observe` the engine around every event it
    /// handles and every expectation it checks: one replay for both the verdict and a picture of it
    /// (``Timeline``), so the two cannot disagree.
    public func run(_ fixture: Fixture, policy: Policy, observe: (Engine, Moment) -> Void) -> Result {
        if let levels = fixture.levels { return Result(fixture: fixture, failures: LevelsRehearsal.run(levels)) }
        var engine = Engine(policy: policy)
        var outcomes: [Outcome] = []
        var unloaded: [Failure] = []
        var now: Milliseconds = 0
        // What the engine sent at `now`, for `sent` expectations.
        var sentNow: [Command] = []
        func advance(to time: Milliseconds) {
            if time > now { sentNow = [] }
            now = max(now, time)
        }
        func handle(_ event: Event) {
            observe(engine, .before(event, at: now))
            let commands = engine.handle(event, at: now)
            sentNow += commands
            observe(engine, .after(event, at: now, commands: commands))
            // Obedient players say Paused at once (a real one takes a few ms; nothing happens between).
            guard fixture.playersObeyPause else { return }
            for answer in commands.compactMap(\.obedientAnswer) { handle(answer) }
        }
        for step in fixture.steps {
            while let due = engine.nextDeadline, due <= step.at {
                advance(to: due)
                handle(.tick)
            }
            advance(to: step.at)
            switch step.action {
            case let .event(event):
                handle(event)
            case let .expect(expectation):
                let failures = check(expectation, engine: engine, sent: sentNow, at: now, location: step.location)
                let outcome = Outcome(at: now, location: step.location, expectation: expectation, failures: failures)
                outcomes.append(outcome)
                observe(engine, .checked(outcome))
            case let .reload(path):
                guard let replacement = reloads[path] else {
                    unloaded.append(Failure(location: step.location, subject: "reload", expected: "the policy \(path)",
                                            got: "no such policy loaded"))
                    continue
                }
                handle(.policyReplaced(replacement))
            }
        }
        return Result(fixture: fixture, failures: unloaded + outcomes.flatMap(\.failures), outcomes: outcomes)
    }

    private func check(_ expectation: Expectation, engine: Engine, sent: [Command], at now: Milliseconds,
                       location: SourceLocation) -> [Failure] {
        var failures: [Failure] = []
        func fail(_ subject: String, _ expected: String, _ got: String) {
            failures.append(Failure(location: location, subject: subject, expected: expected, got: got))
        }
        switch expectation {
        case let .nowPlaying(expected):
            let got = engine.nowPlayingOwner
            if got != expected {
                fail("now-playing", quoted(expected), quoted(got))
            }
        case let .stream(id, state, volume, muted):
            let gotState = engine.state(of: id, at: now)
            if let state, gotState != state {
                fail("stream \"\(id)\" state", state.rawValue, gotState?.rawValue ?? "unknown stream")
            }
            if let volume {
                let got = engine.factor(of: id, at: now)
                if got.map({ abs($0 - volume) > Self.volumeTolerance }) ?? true {
                    fail("stream \"\(id)\" volume", format(volume), got.map(format) ?? "unknown stream")
                }
            }
            if let muted, engine.isMuted(id) != muted {
                fail("stream \"\(id)\" muted", "\(muted)", "\(engine.isMuted(id))")
            }
        case let .sent(id, expected, unexpected):
            let names = sent.compactMap(SentCommand.names(of:)).filter { $0.stream == id }.flatMap(\.names)
            let got = names.isEmpty ? "nothing" : names.joined(separator: ", ")
            for name in expected where !names.contains(name) {
                fail("stream \"\(id)\" sent", name, got)
            }
            for name in unexpected where names.contains(name) {
                fail("stream \"\(id)\" not-sent", name, got)
            }
        }
        return failures
    }

    private func quoted(_ id: StreamID?) -> String { id.map { "\"\($0)\"" } ?? "none" }
    private func format(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        return "\(rounded)"
    }
}
