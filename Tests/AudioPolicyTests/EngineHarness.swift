@testable import AudioPolicy

/// A policy built in code (independent of the TOML loader) with the shipped default's shape.
enum TestPolicy {
    static let standard: Policy = {
        let primary = InterruptionClass(name: "primary", kind: .primary, rank: 0, grace: 1500)
        let short = InterruptionClass(name: "short", kind: .short, outranks: ["primary"], rank: 1,
                                      duck: Level(decibels: -14), duckRamp: 500, restoreRamp: 1000, hold: 500)
        let navigation = InterruptionClass(name: "navigation", kind: .short, outranks: ["primary"], rank: 1,
                                           duck: Level(decibels: -20), duckRamp: 300, restoreRamp: 1000, hold: 500)
        let call = InterruptionClass(name: "call", kind: .call, outranks: ["short", "navigation", "primary"],
                                     rank: 2, hold: 500)
        let mix = InterruptionClass(name: "mix", kind: .mix)
        func rule(_ roles: [String], _ cls: String, spoken: Bool = false) -> Rule {
            Rule(matchers: [PropertyMatcher(key: "media.role", patterns: roles.map(Glob.init))], className: cls,
                 spoken: spoken)
        }
        return Policy(
            source: "test", classes: ["primary": primary, "short": short, "navigation": navigation,
                                      "call": call, "mix": mix],
            rules: [
                rule(["phone", "communication"], "call"),
                rule(["navigation"], "navigation"),
                rule(["event", "notification", "a11y", "assistant"], "short"),
                rule(["production", "test"], "mix"),
                rule(["podcast", "audiobook"], "primary", spoken: true),
                rule(["music", "video", "movie", "game"], "primary"),
            ],
            defaultClass: "primary", muteFade: 500)
    }()
}

/// Drives an engine like the shell does: deadlines are delivered as ticks at their own time, and (unless
/// `playersObeyPause` is false) a paused player says Paused at once, as a fixture's players do.
struct EngineHarness {
    var engine = Engine(policy: TestPolicy.standard)
    var now: Milliseconds = 0
    /// Every command emitted, with the time, decisions left out.
    var commands: [(at: Milliseconds, command: Command)] = []
    var playersObeyPause: Bool

    init(policy: Policy = TestPolicy.standard, playersObeyPause: Bool = true) {
        engine = Engine(policy: policy)
        self.playersObeyPause = playersObeyPause
    }

    @discardableResult
    mutating func at(_ time: Milliseconds, _ event: Event) -> [Command] {
        advance(to: time)
        return handle(event, at: time)
    }

    mutating func advance(to time: Milliseconds) {
        while let due = engine.nextDeadline, due <= time {
            now = max(now, due)
            handle(.tick, at: now)
        }
        now = max(now, time)
    }

    /// The engine's commands for `event`, decisions left out, then the obedient players' Paused.
    @discardableResult
    private mutating func handle(_ event: Event, at time: Milliseconds) -> [Command] {
        let out = engine.handle(event, at: time).filter { if case .decision = $0 { false } else { true } }
        commands += out.map { (time, $0) }
        if playersObeyPause {
            for answer in out.compactMap(\.obedientAnswer) { _ = engine.handle(answer, at: time) }
        }
        return out
    }

    mutating func state(_ id: StreamID, at time: Milliseconds) -> StreamState? {
        advance(to: time)
        return engine.state(of: id, at: time)
    }

    mutating func factor(_ id: StreamID, at time: Milliseconds) -> Double? {
        advance(to: time)
        return engine.factor(of: id, at: time)
    }

    /// Commands emitted about one stream (measurements aside: they change nothing a user hears).
    func commands(for id: StreamID) -> [Command] {
        commands.map(\.command).filter {
            if case .measure = $0 { return false }
            return $0.stream == id
        }
    }

    /// The measurements asked for, in order.
    var measurements: [Command] {
        commands.map(\.command).filter { if case .measure = $0 { true } else { false } }
    }
}

extension Command {
    var stream: StreamID? {
        switch self {
        case let .ramp(id, _, _, _), let .mute(id, _, _), let .unmute(id, _, _), let .pause(id, _),
             let .resume(id, _), let .yieldVolume(id), let .adoptLevel(id), let .rewriteLevel(id), let .repairSaved(id), let .measure(id, _),
             let .hold(id),
             let .interruptionBegan(id), let .putBack(id, _, _):
            return id
        case .nowPlaying: return nil
        case let .decision(decision): return decision.stream
        }
    }
}

func music(_ app: String, player: Bool = true) -> Event {
    .streamStarted(StreamID(app), ["media.role": "music", "application.name": app],
                   player: player ? PlayerID("org.mpris.MediaPlayer2.\(app)") : nil)
}

func stream(_ id: String, role: String?, app: String? = nil, player: Bool = false) -> Event {
    var properties: Properties = ["application.name": app ?? id]
    if let role { properties["media.role"] = role }
    return .streamStarted(StreamID(id), properties, player: player ? PlayerID("org.mpris.MediaPlayer2.\(id)") : nil)
}
