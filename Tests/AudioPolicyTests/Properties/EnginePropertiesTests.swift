@testable import AudioPolicy
import Foundation
import Fuzzing
import Testing

/// Engine invariants over random sequences of every event the engine takes, on every shipped policy.
///
/// Each test runs `PROPERTY_SEQUENCES` sequences (default 20,000; 5–40 steps each) from a fixed base
/// seed (`PROPERTY_SEED` to change it; `PROPERTY_REPLAY=0xSEED` to run one sequence). A failure is
/// shrunk and written as a fixture under `$TMPDIR/audio-policyd-properties/` (and into
/// `PROPERTY_FIXTURES_DIR` when set) that `audio-policyd test` replays; events the fixture format cannot
/// express (policy reloads, `playerChanged`, `pauseIgnored`, `nowPlayingClaimed`, extra ticks) are
/// written as comments, and the message says whether the fixture reproduces the failure without them.
@Suite("EngineProperties")
struct EnginePropertiesTests {
    static let environment = ProcessInfo.processInfo.environment
    static let sequences = environment["PROPERTY_SEQUENCES"].flatMap(Int.init) ?? 20_000

    static func seed(_ text: String?) -> UInt64? {
        guard let text else { return nil }
        return text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
    }

    /// Runs `count` sequences against property `P`; records an issue (shrunk, with its fixture) for each
    /// of the first few failures. Returns how many sequences ran.
    @discardableResult
    static func check<P: EngineProperty>(_ p: P.Type, base: UInt64, count: Int = sequences,
                                         determinism: Bool = false) -> Int {
        var seeds: [UInt64]
        if let replay = seed(environment["PROPERTY_REPLAY"]) {
            seeds = [replay]
        } else {
            let start = seed(environment["PROPERTY_SEED"]) ?? base
            var mixer = SplitMix64(seed: start)
            seeds = (0..<count).map { _ in mixer.next() }
        }
        var failures = 0
        for seed in seeds {
            var generator: PropertyGenerator? = PropertyGenerator(seed: seed)
            var testCase = PropertyCase(seed: seed, policyIndex: generator!.policyIndex, steps: [], survivor: nil)
            let run = PropertyDriver.run(p, &testCase, generator: &generator)
            if determinism {
                let again = PropertyDriver.replay(p, testCase)
                if again.outputs != run.outputs {
                    let first = Array(zip(again.outputs, run.outputs)).firstIndex { $0.0 != $0.1 } ?? min(again.outputs.count, run.outputs.count)
                    Issue.record(Comment(rawValue: """
                        [\(P.name)] seed 0x\(String(seed, radix: 16)): the same sequence gave different commands \
                        at engine call \(first): \(first < run.outputs.count ? "\(run.outputs[first])" : "nothing") \
                        then \(first < again.outputs.count ? "\(again.outputs[first])" : "nothing")
                        """))
                    failures += 1
                }
            }
            guard let violation = run.violation else { continue }
            failures += 1
            report(p, testCase, run: run, violation: violation)
            if failures >= 3 { break }
        }
        return seeds.count
    }

    static func report<P: EngineProperty>(_ p: P.Type, _ testCase: PropertyCase, run: PropertyRun,
                                          violation: Violation) {
        let shrunk = PropertyDriver.shrink(p, testCase, failingStep: run.failingStep)
        let shrunkRun = PropertyDriver.replay(p, shrunk)
        let final = shrunkRun.violation ?? violation
        let written = PropertyDriver.writeFixture(name: P.name, testCase: shrunk, run: shrunkRun.violation == nil ? run : shrunkRun,
                                                  summary: final.message)
        let steps = shrunkRun.transcript.map { "  \($0.time) ms: \(PropertyDriver.describe($0.action))" }
            .joined(separator: "\n")
        Issue.record(Comment(rawValue: """
            [\(P.name)] seed 0x\(String(testCase.seed, radix: 16)) (policy \(PropertyPolicies.all[testCase.policyIndex].name)): \
            \(final.message)
            shrunk from \(testCase.steps.count) to \(shrunk.steps.count) steps:
            \(steps)
            fixture: \(written.paths.joined(separator: ", ")) — \
            \(written.reproduces ? "fails under `audio-policyd test` as it should"
                : final.expectations.isEmpty ? "no expectation can state this one"
                : "does NOT reproduce under `audio-policyd test` (\(written.unexpressible) step(s) written as comments)")
            replay: PROPERTY_REPLAY=0x\(String(testCase.seed, radix: 16))
            """))
    }

    // MARK: - The invariants

    @Test("1. once every interruption is over, no surviving stream is left ducked or muted")
    func nothingLeftDucked() {
        Self.check(QuiescenceProperty.self, base: 0x1111)
    }

    @Test("2. never resumes what the user paused, nor what it paused for good")
    func neverResumesUnwanted() {
        Self.check(ResumeProperty.self, base: 0x2222)
    }

    @Test("3. the user's volume and mute are never overwritten during the interruption")
    func userWins() {
        Self.check(UserWinsProperty.self, base: 0x3333)
    }

    @Test("4. Now Playing is a heard primary stream, a primary hook, or a claim")
    func nowPlayingIsSane() {
        Self.check(NowPlayingProperty.self, base: 0x4444)
    }

    @Test("6. an ambient stream (a game) never pauses or mutes anything, and nothing but a call, a prompt or media acts on it")
    func ambientMixes() {
        Self.check(AmbientProperty.self, base: 0x7777)
    }

    @Test("7. nothing is muted or paused by an output event the rules do not call for")
    func outputLossesAreCalledFor() {
        Self.check(OutputLossProperty.self, base: 0x8888)
    }

    @Test("8. every stream's glance is its record's, and the deadline scans miss no stream that is due")
    func glancesAreTheRecords() {
        Self.check(GlanceProperty.self, base: 0x9999, count: Self.sequences / 4)
    }

    @Test("5a. the same sequence gives the same commands")
    func deterministic() {
        Self.check(RampContinuityProperty.self, base: 0x5555, count: Self.sequences / 2, determinism: true)
    }

    @Test("5b. every ramp starts where the engine last left the stream")
    func rampsAreContinuous() {
        Self.check(RampContinuityProperty.self, base: 0x6666)
    }
}

// MARK: - 1. Quiescence

struct QuiescenceProperty: EngineProperty {
    static let name = "quiescence"
    static let wantsQuiescence = true
    var shell = ShellModel()
    var outputs = OutputLossModel()

    mutating func observe(_ step: Observed, engine: Engine) -> Violation? {
        _ = shell.apply(step)
        _ = outputs.apply(step, engine: engine, window: engine.policy.outputs.switchWindow)
        return nil
    }

    mutating func quiescent(engine: Engine, now: Milliseconds, survivors: [StreamID]) -> Violation? {
        // A stream held muted after an output loss the rules call for, until the user acts, is by design.
        for id in survivors where !outputs.heldByDesign(id, engine: engine) {
            let factor = engine.factor(of: id, at: now) ?? 1
            let told = shell.factor(id, at: now)
            let problems = [
                abs(factor - 1) > 1e-9 ? "factor \(factor)" : nil,
                engine.isMuted(id) ? "muted by the policy" : nil,
                abs(told - 1) > 1e-9 ? "the shell was last told factor \(told)" : nil,
                shell.streams[id]?.muted == true ? "the shell was last told to mute it" : nil,
                engine.state(of: id, at: now) == .ducked ? "state ducked" : nil,
                engine.streams[id]?.pausedBy == .player ? "still held paused (to be resumed)" : nil,
            ].compactMap { $0 }
            if !problems.isEmpty {
                return Violation(
                    message: "stream \(id) left changed \(PropertyDriver.quiescenceWait / 1000) s after every other app's stream ended, every hook was released and (with a focus source) its app had focus: \(problems.joined(separator: ", "))",
                    expectations: [PropertyDriver.expectStream(id, at: now, ["volume = 1.0", "muted = false"])])
            }
        }
        return nil
    }
}

// MARK: - 2. Resume only what the engine paused to resume

struct ResumeProperty: EngineProperty {
    static let name = "resume"
    /// `outputLoss`: paused for an output's loss, resumed only by the opt-in `resume-when-back` and only
    /// if the user has not touched it since.
    enum Hold { case transient, forGood, outputLoss }
    var hold: [StreamID: Hold] = [:]
    var userPaused: Set<StreamID> = []
    /// When the mute fallback took over a transient pause: its player's Paused within a `pause-timeout`
    /// after that is the engine's Pause obeyed late (to be resumed with the unmute), a later one the user's.
    var fallbackAt: [StreamID: Milliseconds] = [:]
    /// A stop the engine may take a Playing within ``Engine/glitch`` after for a flicker (the same sound
    /// going on), with the fallback's window as it was before the stop: the flicker leaves that window
    /// open, so a Paused after it may still be the Pause obeyed late.
    /// `underPlayer`: its player said Playing then and nothing else since, so a Playing within
    /// ``Engine/streamFlicker`` is a flicker too (``TrackedStream/stoppedUnderPlayingPlayer``).
    var stops: [StreamID: (at: Milliseconds, window: Milliseconds?, underPlayer: Bool)] = [:]

    mutating func observe(_ step: Observed, engine: Engine) -> Violation? {
        switch step.action {
        case let .event(.streamStarted(id, _, _, _, _, _, _))?, let .event(.streamEnded(id))?:
            hold[id] = nil
            userPaused.remove(id)
            fallbackAt[id] = nil
            stops[id] = nil
        case let .event(.userVolume(id, _, _))?, let .event(.userMute(id, _))?:
            if hold[id] == .outputLoss { hold[id] = .forGood }
        case let .event(.playerStatus(player, status))? where status != .playing:
            // Its player said it stopped: a stop of its streams is its player's.
            for id in stops.keys where engine.streams[id]?.player == player { stops[id]?.underPlayer = false }
        case let .event(.playback(id, playing))?:
            let stop = stops.removeValue(forKey: id)
            if !playing, let stream = engine.streams[id], let at = stream.stoppedAt {
                stops[id] = (at, fallbackAt[id], stream.stoppedUnderPlayingPlayer)
            }
            if playing, let stop,
               step.time - stop.at < Engine.glitch || stop.underPlayer && step.time - stop.at < Engine.streamFlicker,
               engine.streams[id].map({ $0.pausedBy == nil || $0.pausedBy == .mute }) == true {
                // A flicker: not the user's play, and the stop before it was not the Pause obeyed late.
                userPaused.remove(id)
                fallbackAt[id] = stop.window
            } else if playing {
                userPaused.remove(id)
                hold[id] = nil
                fallbackAt[id] = nil
            } else if hold[id] == nil, engine.streams[id]?.isLive == true {
                userPaused.insert(id) // the engine did not hold it paused: the user (or the app) paused it
            } else if let fallback = fallbackAt[id] {
                // The first Paused after the fallback decides: long after it, the user paused it.
                if step.time - fallback > engine.policy.pauseTimeout { userPaused.insert(id) }
                fallbackAt[id] = nil
            }
        default:
            break
        }
        var resumed: Set<StreamID> = []
        for command in step.commands {
            switch command {
            case let .resume(id, _):
                let why: String? = userPaused.contains(id) ? "which the user paused"
                    : hold[id] == .forGood ? "which it had paused for good"
                    : hold[id] == .outputLoss && engine.policy.outputs.resumeWhenBack == nil
                        ? "which an output loss paused, without resume-when-back"
                    : hold[id] == nil ? "which it never paused" : nil
                if let why {
                    return Violation(message: "resumed \(id) at \(step.time) ms, \(why)",
                                     expectations: [PropertyDriver.expectStream(id, at: step.time, ["state = \"paused\""])])
                }
                hold[id] = nil
                resumed.insert(id)
            case let .pause(id, _):
                hold[id] = engine.streams[id]?.pausedBy == .player ? .transient
                    : engine.streams[id]?.outputLoss?.phase == .pausing ? .outputLoss : .forGood
                fallbackAt[id] = nil
            case let .mute(id, _, _) where hold[id] == .transient && engine.streams[id]?.pausedBy == .mute:
                fallbackAt[id] = fallbackAt[id] ?? step.time
            default:
                break
            }
        }
        // A transient pause the engine let go of without resuming (escalation: "stays paused"; the player
        // left) is never resumed. Under the mute fallback it is still the engine's: a player that obeys the
        // Pause late is resumed with the unmute.
        for (id, kind) in hold where kind == .transient && !resumed.contains(id)
            && engine.streams[id]?.pausedBy != .player && engine.streams[id]?.pausedBy != .mute {
            hold[id] = .forGood
            fallbackAt[id] = nil
        }
        return nil
    }
}

// MARK: - 3. The user wins

struct UserWinsProperty: EngineProperty {
    static let name = "user-wins"
    /// Per stream whose volume the user took over: the interruptions that were acting on it then, still acting.
    var protected: [StreamID: Set<StreamID>] = [:]
    var userMuted: Set<StreamID> = []

    /// Whether `m` asks something of `x` now (the engine's own rules: in force, outranks, and a primary
    /// past its grace asks nothing of a stream whose player it paused for good).
    static func demands(_ engine: Engine, _ m: TrackedStream, on x: TrackedStream, at now: Milliseconds) -> Bool {
        let kind = m.interruptionClass.kind
        if kind == .mix || kind == .ambient || !m.hasPlayed { return false }
        if let released = m.silenceEndsInterruption, now >= released { return false }
        if kind == .short || kind == .primary, !(m.playing || m.endedAt != nil || m.isHook) { return false }
        guard engine.affects(m, x) else { return false }
        if kind == .primary, m.escalated, x.player != nil { return false }
        return true
    }

    static func demanders(_ engine: Engine, on id: StreamID, at now: Milliseconds) -> Set<StreamID> {
        guard let x = engine.streams[id], x.isLive, !x.isHook else { return [] }
        return Set(engine.streams.values.filter { demands(engine, $0, on: x, at: now) }.map(\.id))
    }

    mutating func observe(_ step: Observed, engine: Engine) -> Violation? {
        switch step.action {
        case let .event(.streamStarted(id, _, _, _, muted, _, _))?:
            protected[id] = nil
            if muted { userMuted.insert(id) } else { userMuted.remove(id) }
        case let .event(.streamEnded(id))?:
            protected[id] = nil
            userMuted.remove(id)
        case let .event(.userMute(id, muted))?:
            if muted { userMuted.insert(id) } else { userMuted.remove(id) }
        default:
            break
        }
        for command in step.commands {
            switch command {
            case let .yieldVolume(id):
                let acting = Self.demanders(engine, on: id, at: step.time)
                protected[id] = acting.isEmpty ? nil : acting
            case let .ramp(id, _, to, duration) where to < 1 - 1e-9:
                if let acting = protected[id] {
                    return Violation(
                        message: "ducked \(id) to \(to) at \(step.time) ms after the user set its volume, while \(acting.sorted()) still interrupt it",
                        expectations: [PropertyDriver.expectStream(id, at: step.time + duration, ["volume = 1.0"])])
                }
            case let .putBack(id, level, unmute):
                if unmute, userMuted.contains(id) {
                    return Violation(message: "put \(id) back unmuted at \(step.time) ms, which the user had muted",
                                     expectations: [])
                }
                // Its own level is written only where the policy leaves its level alone.
                if level, let factor = engine.factor(of: id, at: step.time), abs(factor - 1) > 1e-9 {
                    return Violation(message: "put \(id) back at its own level at \(step.time) ms while the policy has it at \(factor)",
                                     expectations: [])
                }
            case let .unmute(id, to, fade):
                if userMuted.contains(id) {
                    return Violation(message: "unmuted \(id) at \(step.time) ms, which the user had muted",
                                     expectations: [PropertyDriver.expectStream(id, at: step.time, ["muted = true"])])
                }
                if to < 1 - 1e-9, let acting = protected[id] {
                    return Violation(
                        message: "unmuted \(id) to a duck (\(to)) at \(step.time) ms after the user set its volume, while \(acting.sorted()) still interrupt it",
                        expectations: [PropertyDriver.expectStream(id, at: step.time + fade, ["volume = 1.0"])])
                }
            default:
                break
            }
        }
        // Interruptions that stopped acting are over for this purpose (even if they start again).
        for (id, acting) in protected {
            let still = acting.intersection(Self.demanders(engine, on: id, at: step.time))
            protected[id] = still.isEmpty ? nil : still
        }
        return nil
    }
}

// MARK: - 4. Now Playing

struct NowPlayingProperty: EngineProperty {
    static let name = "now-playing"
    /// Whether the stream may have been heard (false: its first measurement since it started was silent
    /// and nothing audible since). Lenient: anything that may have restarted it counts as heard.
    var heard: [StreamID: Bool] = [:]
    var measured: Set<StreamID> = []
    var claims: Set<StreamID> = []
    var owner: StreamID?

    mutating func observe(_ step: Observed, engine: Engine) -> Violation? {
        switch step.action {
        case let .event(.streamStarted(id, _, _, _, _, _, _))?:
            heard[id] = true
            measured.remove(id)
        case let .event(.audibility(id, audible))?:
            if let stream = engine.streams[id], stream.isLive, !stream.isHook {
                if audible { heard[id] = true } else if !measured.contains(id) { heard[id] = false }
                measured.insert(id)
            }
        case let .event(.playback(id, true))?:
            heard[id] = true
        case let .event(.nowPlayingClaimed(token, _, _))?:
            claims.insert(token)
        default:
            break
        }
        for command in step.commands {
            switch command {
            case let .resume(id, _), let .unmute(id, _, _):
                heard[id] = true
            case let .nowPlaying(new):
                let previous = owner
                owner = new
                guard let new, !claims.contains(new), let stream = engine.streams[new] else { continue }
                let kind = stream.interruptionClass.kind
                var problem: String?
                if kind != .primary {
                    problem = "of class \(stream.interruptionClass.name) (kind \(kind))"
                } else if !stream.isHook, heard[new] == false {
                    problem = "never heard (its first measurement was silent)"
                }
                if let problem {
                    return Violation(
                        message: "Now Playing went to \(new) at \(step.time) ms, a stream \(problem)",
                        expectations: ["[[expect]]\nat = \(step.time)\nnow-playing = \(PropertyDriver.quote(previous?.rawValue ?? ""))"])
                }
            default:
                break
            }
        }
        if engine.nowPlayingOwner != owner {
            return Violation(message: "Now Playing is \(engine.nowPlayingOwner.map(\.rawValue) ?? "none") at \(step.time) ms but the last nowPlaying command said \(owner.map(\.rawValue) ?? "none")",
                             expectations: [])
        }
        return nil
    }
}

// MARK: - 5. Ramps start where the stream is

struct RampContinuityProperty: EngineProperty {
    static let name = "ramp-continuity"
    var shell = ShellModel()

    mutating func observe(_ step: Observed, engine: Engine) -> Violation? {
        if let (id, expected, got) = shell.apply(step) {
            return Violation(
                message: "ramp for \(id) at \(step.time) ms starts from \(got), but the engine last left it at \(expected)",
                expectations: [PropertyDriver.expectStream(id, at: step.time, ["volume = \(expected)"])])
        }
        return nil
    }
}

// MARK: - 6. Ambient streams mix

/// Games and other ambient sounds mix: every pause or mute the engine asks for has a cause that is not
/// ambient (a call, a prompt, media past its grace, a primary hook), and no ambient stream is ever paused
/// or muted by media.
struct AmbientProperty: EngineProperty {
    static let name = "ambient"
    /// Streams held paused through their player after the previous step: a mute of one of them is the
    /// fallback for a Pause asked earlier (its player ignored it), whose cause may be over by now.
    var heldByPlayer: Set<StreamID> = []

    mutating func observe(_ step: Observed, engine: Engine) -> Violation? {
        defer { heldByPlayer = Set(engine.streams.values.filter { $0.pausedBy == .player }.map(\.id)) }
        for command in step.commands {
            let id: StreamID
            switch command {
            case let .pause(target, _): id = target
            case let .mute(target, _, _) where !heldByPlayer.contains(target): id = target
            default: continue
            }
            guard let target = engine.streams[id], target.outputLoss == nil else { continue } // its output was lost
            // Its app's last window closed and its class or rule says closed-window = pause: the window
            // caused it, not a stream.
            if case .pause = command, case .event(.lastWindowClosed)? = step.action,
               (target.classification.rule?.closedWindow ?? target.interruptionClass.closedWindow) == .pause {
                continue
            }
            let causes = engine.streams.values.filter { m in
                m.id != id && m.interruptionClass.kind != .ambient && m.interruptionClass.kind != .mix
                    && engine.affects(m, target)
            }
            if causes.isEmpty {
                return Violation(message: "\(command) at \(step.time) ms with nothing but ambient or mix streams to cause it",
                                 expectations: [PropertyDriver.expectStream(id, at: step.time, ["muted = false"])])
            }
            if target.interruptionClass.kind == .ambient,
               causes.allSatisfy({ $0.interruptionClass.kind == .primary && !$0.isHook }) {
                return Violation(message: "the ambient stream \(id) was paused or muted by media at \(step.time) ms: \(command)",
                                 expectations: [PropertyDriver.expectStream(id, at: step.time, ["muted = false"])])
            }
        }
        return nil
    }
}
