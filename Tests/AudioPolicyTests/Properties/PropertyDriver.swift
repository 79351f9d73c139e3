@testable import AudioPolicy
import Foundation

// Runs sequences against the engine the way FixtureRunner does (every due deadline is delivered as a
// tick at its own time before the next step), checks one property after every engine call, shrinks a
// failing sequence and writes it out as a fixture.

/// What one engine call saw: its time, what it was (nil: a deadline's tick), what came out.
struct Observed {
    var time: Milliseconds
    var action: PropertyAction?
    var commands: [Command]
}

/// A property's verdict against a sequence.
struct Violation: Error, CustomStringConvertible {
    var message: String
    /// `[[expect]]` tables stating the invariant, for the fixture (empty: none can be written).
    var expectations: [String]
    var description: String { message }
}

/// One invariant, checked from the commands the engine emits (and, where the outside cannot tell, its
/// state through `@testable`).
protocol EngineProperty {
    static var name: String { get }
    /// The end phase: every other app's stream ended, hooks released, captures ended, the clock +60 s.
    static var wantsQuiescence: Bool { get }
    init()
    mutating func observe(_ step: Observed, engine: Engine) -> Violation?
    /// After the end phase: `survivors` are the live streams of the one app left.
    mutating func quiescent(engine: Engine, now: Milliseconds, survivors: [StreamID]) -> Violation?
}

extension EngineProperty {
    static var wantsQuiescence: Bool { false }
    mutating func quiescent(engine: Engine, now: Milliseconds, survivors: [StreamID]) -> Violation? { nil }
}

/// A sequence to run: its policy, its steps, and (for the end phase) the stream whose app survives.
struct PropertyCase {
    var seed: UInt64
    var policyIndex: Int
    var steps: [PropertyStep]
    var survivor: StreamID?
}

/// What a run produced.
struct PropertyRun {
    var violation: Violation?
    /// Index of the step the violation came at (steps.count: the end phase).
    var failingStep: Int?
    /// Every non-tick action delivered, with its time (the end phase's included): the fixture's events.
    var transcript: [(time: Milliseconds, action: PropertyAction)] = []
    /// Everything the engine said, per call, for the determinism check.
    var outputs: [[Command]] = []
    var finalTime: Milliseconds = 0
}

enum PropertyDriver {
    static let quiescenceWait: Milliseconds = 60_000

    /// Runs `steps` (or, with a generator, steps made on the fly and stored into `steps`).
    static func run<P: EngineProperty>(_: P.Type, _ testCase: inout PropertyCase,
                                       generator: inout PropertyGenerator?) -> PropertyRun {
        var property = P()
        var engine = Engine(policy: PropertyPolicies.all[testCase.policyIndex].policy)
        var now: Milliseconds = 0
        var result = PropertyRun()
        var last: [Command] = []

        func call(_ action: PropertyAction?, at time: Milliseconds) -> Violation? {
            let out: [Command]
            switch action {
            case let .event(event)?: out = engine.handle(event, at: time)
            case let .reload(index)?: out = engine.handle(.policyReplaced(PropertyPolicies.all[index].policy), at: time)
            case nil: out = engine.handle(.tick, at: time)
            }
            if let action { result.transcript.append((time, action)) }
            result.outputs.append(out)
            last = out
            return property.observe(Observed(time: time, action: action, commands: out), engine: engine)
        }

        func advance(to time: Milliseconds) -> Violation? {
            var ticks = 0
            while let due = engine.nextDeadline, due <= time {
                now = max(now, due)
                if let violation = call(nil, at: now) { return violation }
                ticks += 1
                if ticks > 1000 {
                    return Violation(message: "nextDeadline stays due at \(now) ms after 1000 ticks (a deadline that never passes)",
                                     expectations: [])
                }
            }
            now = max(now, time)
            return nil
        }

        var index = 0
        while true {
            let step: PropertyStep
            if generator != nil {
                guard let made = generator!.next(after: last) else { break }
                testCase.steps.append(made)
                step = made
            } else {
                guard index < testCase.steps.count else { break }
                step = testCase.steps[index]
            }
            if let violation = advance(to: now + step.gap) ?? call(step.action, at: now) {
                result.violation = violation
                result.failingStep = index
                result.finalTime = now
                return result
            }
            index += 1
        }

        if P.wantsQuiescence, testCase.survivor == nil {
            // The app left standing: one of the live streams, picked by the seed.
            let live = engine.streams.values.filter { $0.isLive && !$0.isHook }.map(\.id)
            if !live.isEmpty { testCase.survivor = live[Int(testCase.seed % UInt64(live.count))] }
        }
        if P.wantsQuiescence, let survivor = testCase.survivor, let target = engine.streams[survivor], target.isLive,
           !target.isHook {
            let app = target.app
            let end = now + 10
            // Hooks that wait for a call to end are released too (withdrawn), before the call ends.
            var actions: [PropertyAction] = engine.callWait.waiting.map { .event(.interruptionEnded(token: $0.token)) }
            for stream in engine.streams.values where stream.isLive {
                if stream.isHook { actions.append(.event(.interruptionEnded(token: stream.id))) }
                else if stream.app != app { actions.append(.event(.streamEnded(stream.id))) }
            }
            for capture in engine.captures.keys.sorted() { actions.append(.event(.captureEnded(capture))) }
            // Focus elsewhere is an interruption too: the person looks at the app left standing (or, when
            // no focus source could name it, the source goes away), and what focus did must be undone.
            if engine.windowFocus.known {
                let properties = target.properties
                let look = AppIdentity(pid: properties["application.process.id"].flatMap(Int.init),
                                       name: properties["application.process.binary"] ?? properties["application.name"])
                actions.append(.event(look.pid == nil && look.name == nil ? .focusUnknown : .focus(look)))
            }
            var violation = advance(to: end)
            for action in actions where violation == nil { violation = call(action, at: now) }
            if violation == nil { violation = advance(to: now + quiescenceWait) }
            if violation == nil {
                // A last tick at the end: what the shell's timer would see.
                violation = call(nil, at: now)
            }
            if violation == nil {
                let survivors = engine.streams.values.filter { $0.isLive && !$0.isHook && $0.app == app }.map(\.id)
                violation = property.quiescent(engine: engine, now: now, survivors: survivors)
            }
            if let violation {
                result.violation = violation
                result.failingStep = testCase.steps.count
            }
        }
        result.finalTime = now
        return result
    }

    static func replay<P: EngineProperty>(_ p: P.Type, _ testCase: PropertyCase) -> PropertyRun {
        var copy = testCase
        var none: PropertyGenerator? = nil
        return run(p, &copy, generator: &none)
    }

    // MARK: - Shrinking

    /// Drops steps one by one and shortens gaps while the property still fails.
    static func shrink<P: EngineProperty>(_ p: P.Type, _ failing: PropertyCase, failingStep: Int?,
                                          budget: Int = 3000) -> PropertyCase {
        var best = failing
        if let failingStep, failingStep < best.steps.count {
            best.steps = Array(best.steps.prefix(failingStep + 1))
        }
        var tries = 0
        func fails(_ candidate: PropertyCase) -> Bool {
            tries += 1
            return replay(p, candidate).violation != nil
        }
        var changed = true
        while changed, tries < budget {
            changed = false
            var index = best.steps.count - 1
            while index >= 0, tries < budget {
                var candidate = best
                candidate.steps.remove(at: index)
                if fails(candidate) {
                    best = candidate
                    changed = true
                }
                index -= 1
            }
            for index in best.steps.indices where tries < budget {
                while best.steps[index].gap > 0, tries < budget {
                    var candidate = best
                    let gap = best.steps[index].gap
                    candidate.steps[index].gap = gap == 1 ? 0 : gap / 2
                    if fails(candidate) {
                        best = candidate
                        changed = true
                    } else {
                        // Try zero once: same-instant orders are the usual culprits.
                        candidate.steps[index].gap = 0
                        if gap > 1, fails(candidate) {
                            best = candidate
                            changed = true
                        }
                        break
                    }
                }
            }
        }
        return best
    }

    // MARK: - Fixtures

    /// Writes the run as a fixture; returns (path, whether `audio-policyd test` fails on it as it should).
    static func writeFixture(name: String, testCase: PropertyCase, run: PropertyRun, summary: String)
        -> (paths: [String], reproduces: Bool, unexpressible: Int) {
        var unexpressible = 0
        func text(policyReference: String?) -> String {
            var lines: [String] = []
            lines.append("description = \(quote("Property \(name) (seed 0x\(String(testCase.seed, radix: 16))): \(summary)"))")
            if let policyReference { lines.append("policy = \(quote(policyReference))") }
            lines.append("players-obey-pause = false") // the transcript carries every Paused a player said
            lines.append("# Written by the EngineProperties tests (Tests/AudioPolicyTests/Properties), shrunk.")
            lines.append("# Policy: \(PropertyPolicies.all[testCase.policyIndex].name).")
            unexpressible = 0
            for (time, action) in run.transcript {
                let body = fixtureLines(action)
                lines.append("")
                if let body {
                    lines.append("[[event]]")
                    lines.append("at = \(time)")
                    lines += body
                } else {
                    unexpressible += 1
                    lines.append("# at = \(time): \(describe(action)) (not expressible in a fixture)")
                }
            }
            for expectation in run.violation?.expectations ?? [] {
                lines.append("")
                lines.append(expectation)
            }
            return lines.joined(separator: "\n") + "\n"
        }

        var paths: [String] = []
        let file = "\(name)-\(String(testCase.seed, radix: 16)).toml"
        let temporary = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("audio-policyd-properties")
        try? FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        let policyPath = PropertyPolicies.all[testCase.policyIndex].path
        let temporaryPath = temporary.appendingPathComponent(file).path
        let temporaryText = text(policyReference: policyPath)
        try? temporaryText.write(toFile: temporaryPath, atomically: true, encoding: .utf8)
        paths.append(temporaryPath)
        if let folder = ProcessInfo.processInfo.environment["PROPERTY_FIXTURES_DIR"], !folder.isEmpty {
            let directory = URL(fileURLWithPath: folder).standardizedFileURL
            try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let relative = policyPath.map { relativePath(from: directory.path, to: $0) }
            let path = directory.appendingPathComponent(file).path
            try? text(policyReference: relative).write(toFile: path, atomically: true, encoding: .utf8)
            paths.append(path)
        }
        // Does the fixture fail, as it should until the engine is fixed?
        var reproduces = false
        if !(run.violation?.expectations.isEmpty ?? true),
           let fixture = try? FixtureLoader.load(text: temporaryText, file: temporaryPath) {
            let policy = PropertyPolicies.all[testCase.policyIndex].policy
            reproduces = !FixtureRunner().run(fixture, policy: policy).passed
        }
        return (paths, reproduces, unexpressible)
    }

    static func relativePath(from directory: String, to file: String) -> String {
        let from = URL(fileURLWithPath: directory).standardizedFileURL.pathComponents
        let to = URL(fileURLWithPath: file).standardizedFileURL.pathComponents
        var common = 0
        while common < min(from.count, to.count), from[common] == to[common] { common += 1 }
        return (Array(repeating: "..", count: from.count - common) + to[common...]).joined(separator: "/")
    }

    static func quote(_ text: String) -> String { FixtureEvent.quote(text) }

    /// The `[[event]]` body for an action, or nil if the fixture format has no verb for it.
    static func fixtureLines(_ action: PropertyAction) -> [String]? {
        guard case let .event(event) = action else { return nil }
        return FixtureEvent(event)?.tomlLines
    }

    static func describe(_ action: PropertyAction) -> String {
        switch action {
        case let .reload(index): return "policy reload: \(PropertyPolicies.all[index].name)"
        case let .event(event): return "\(event)"
        }
    }

    static func expectStream(_ id: StreamID, at time: Milliseconds, _ fields: [String]) -> String {
        (["[[expect]]", "at = \(time)", "stream = \(quote(id.rawValue))"] + fields).joined(separator: "\n")
    }
}

/// What the shell has been told to do to each stream's factor, modelled from the commands alone.
struct ShellModel {
    struct Stream {
        var ramp = Ramp.steady(1)
        var muted = false
    }
    var streams: [StreamID: Stream] = [:]

    func factor(_ id: StreamID, at time: Milliseconds) -> Double { streams[id]?.ramp.value(at: time) ?? 1 }

    /// Applies a step; returns the first ramp whose `from` is not where the shell is.
    mutating func apply(_ step: Observed) -> (StreamID, expected: Double, got: Double)? {
        if case let .event(.streamStarted(id, _, _, _, _, _, _))? = step.action { streams[id] = Stream() }
        // The user muting or unmuting takes the mute over: it is no longer the policy's to undo (the daemon
        // forgets its own mute on any mute change it did not make).
        if case let .event(.userMute(id, _))? = step.action { streams[id]?.muted = false }
        var mismatch: (StreamID, Double, Double)?
        let now = step.time
        for command in step.commands {
            switch command {
            case let .ramp(id, from, to, duration):
                let current = factor(id, at: now)
                if abs(current - from) > 1e-9, mismatch == nil { mismatch = (id, current, from) }
                streams[id, default: Stream()].ramp = Ramp(from: from, to: to, start: now, duration: duration)
            case let .mute(id, from, fade):
                let current = factor(id, at: now)
                if abs(current - from) > 1e-9, mismatch == nil { mismatch = (id, current, from) }
                streams[id, default: Stream()].ramp = Ramp(from: from, to: 0, start: now, duration: fade)
                streams[id, default: Stream()].muted = true
            case let .unmute(id, to, fade):
                streams[id, default: Stream()].ramp = Ramp(from: 0, to: to, start: now, duration: fade)
                streams[id, default: Stream()].muted = false
            case let .yieldVolume(id), let .adoptLevel(id):
                streams[id, default: Stream()].ramp = .steady(1)
            default:
                break
            }
        }
        return mismatch
    }
}
