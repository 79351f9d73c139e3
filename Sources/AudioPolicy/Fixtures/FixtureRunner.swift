/// Replays a ``Fixture`` against a fresh ``Engine`` on a virtual clock and checks its expectations.
///
/// Before each step at time `at`, every engine deadline due by then is delivered as a tick at its own
/// time, so grace times and holds end exactly when they would on a real clock.
public struct FixtureRunner: Sendable {
    public init() {}

    /// The outcome of one fixture.
    public struct Result: Sendable {
        public var fixture: Fixture
        public var failures: [Failure]
        public var passed: Bool { failures.isEmpty }
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

    public func run(_ fixture: Fixture, policy: Policy) -> Result {
        var engine = Engine(policy: policy)
        var failures: [Failure] = []
        var now: Milliseconds = 0
        for step in fixture.steps {
            while let due = engine.nextDeadline, due <= step.at {
                now = max(now, due)
                _ = engine.handle(.tick, at: now)
            }
            now = max(now, step.at)
            switch step.action {
            case let .event(event):
                _ = engine.handle(event, at: now)
            case let .expect(expectation):
                failures += check(expectation, engine: engine, at: now, location: step.location)
            }
        }
        return Result(fixture: fixture, failures: failures)
    }

    private func check(_ expectation: Expectation, engine: Engine, at now: Milliseconds,
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
        }
        return failures
    }

    private func quoted(_ id: StreamID?) -> String { id.map { "\"\($0)\"" } ?? "none" }
    private func format(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        return "\(rounded)"
    }
}
