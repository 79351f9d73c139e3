@testable import AudioPolicy
import Foundation
import Testing

/// The levels stage's invariants over random sequences, on both servers' saving (``SavingServer``):
/// streams start, end and move; users set levels and mutes; the policy ducks, restores, fades out, holds
/// and unmutes; the daemon is killed and starts again; the server restarts.
///
/// - Whose level: at every step, the own level the daemon takes for each stream it knows is its user's
///   (the user's level is never overwritten, nor taken from one of our writes).
/// - Nothing of ours outlives it: once everything is over (the daemon running, the policy's changes
///   undone, every stream ended), every saved entry holds its user's level and mute.
///
/// `LEVELS_SEQUENCES` sequences per server (default 4,000; 10–60 steps) from a fixed seed
/// (`LEVELS_SEED`); a failure is shrunk and printed as a levels fixture that `audio-policyd test` replays.
/// `LEVELS_ONLY=SEED` checks the one sequence a failure names by its seed (`seed N on SERVER`), on both
/// servers, to try a rule against it without running the thousands before it.
@Suite("LevelsProperties")
struct LevelsPropertyTests {
    static let environment = ProcessInfo.processInfo.environment
    static let sequences = environment["LEVELS_SEQUENCES"].flatMap(Int.init) ?? 4_000
    static let seed = environment["LEVELS_SEED"].flatMap { UInt64($0) } ?? 20_261_127

    @Test("whose level: the daemon's own level is the user's, and nothing of ours is saved at the end",
          arguments: ServerSaving.allCases)
    func invariants(saving: ServerSaving) {
        var mixer = SplitMix64(seed: Self.seed &+ UInt64(saving == .pulseAudio ? 0 : 1))
        var failures = 0
        let only = Self.environment["LEVELS_ONLY"].flatMap { UInt64($0) }
        for _ in 0..<(only == nil ? Self.sequences : 1) {
            let seed = only ?? mixer.next()
            let steps = LevelsSequence.generate(seed: seed)
            guard let violation = LevelsSequence.check(steps, saving: saving) else { continue }
            let shrunk = LevelsSequence.shrink(steps, saving: saving)
            let fixture = LevelsSequence.fixture(shrunk, saving: saving,
                                                 violation: LevelsSequence.check(shrunk, saving: saving) ?? violation)
            if only != nil, LevelsSequence.trace { _ = LevelsSequence.check(shrunk, saving: saving, trace: true) }
            Issue.record("seed \(seed) on \(saving.rawValue): \(violation)\nshrunk to \(shrunk.count) steps:\n\(fixture)")
            failures += 1
            if failures >= (Int(Self.environment["LEVELS_FAILURES"] ?? "") ?? 2) { break }
        }
    }

    @Test("control: a daemon that takes our saved mute for the user's (the soak's bug) fails the property on both servers",
          arguments: ServerSaving.allCases)
    func canFail(saving: ServerSaving) {
        var mixer = SplitMix64(seed: Self.seed)
        var found: String?
        for _ in 0..<Self.sequences where found == nil {
            found = LevelsSequence.check(LevelsSequence.generate(seed: mixer.next()), saving: saving, control: true)
        }
        #expect(found != nil, "no sequence left a mute of ours behind with the daemon of the soak's bug")
    }
}

/// Random sequences of levels steps, their invariants, shrinking, and the fixture text for one.
enum LevelsSequence {
    typealias Action = LevelsScenario.Action
    struct Step { var at: Milliseconds; var action: Action }

    static let keys = ["sink-input-by-media-role:music", "sink-input-by-application-name:mpv"]

    /// The entries each key starts with: its user's levels.
    static let entries: [(key: String, level: ChannelVolumes, muted: Bool)] = [
        (keys[0], ChannelVolumes(values: [CubicVolume.raw(linear: 0.9), CubicVolume.raw(linear: 0.7)]), false),
        (keys[1], ChannelVolumes(values: [CubicVolume.raw(linear: 0.6), CubicVolume.raw(linear: 0.8)]), false),
    ]

    static let crashes = ProcessInfo.processInfo.environment["LEVELS_CRASHES"] ?? "kill,server"

    static func generate(seed: UInt64) -> [Step] {
        var rng = SplitMix64(seed: seed)
        // Overtaking starts draw from a stream of their own, so that a seed's sequence is the same as
        // before they were modelled, with some starts overtaking the daemon's last writes on top.
        var overtaking = SplitMix64(seed: seed ^ 0x6F76_6572_7461_6B65)
        // So do late volumes (pipewire-pulse: a stream announced at 0, its volume told later; the
        // PulseAudio rehearsal takes every volume at once): which starts are late, and how many steps
        // later the volume arrives.
        var lateness = SplitMix64(seed: seed ^ 0x6C61_7465_766F_6C75)
        // And whether WirePlumber restored a late stream's entry only as its volume arrives (the entry as
        // it is then) or as it started.
        var restoring = SplitMix64(seed: seed ^ 0x7265_7374_6F72_6564)
        // And whether the daemon is killed as it hears of a start, before it has put the start right (the
        // 40 s churn on PipeWire, CI's seed).
        var startKills = SplitMix64(seed: seed ^ 0x6B69_6C6C_7374_6172)
        var arrivals: [(name: String, after: Int, restoredNow: Bool)] = []
        func pick<T>(_ list: [T]) -> T { list[Int(rng.next() % UInt64(list.count))] }
        func chance(_ percent: UInt64) -> Bool { rng.next() % 100 < percent }
        // Levels are unbalanced: a balanced level at a copy of another balanced level scaled down cannot
        // be told from a duck or a ramp's step of ours once the run that wrote it is gone (README, known
        // gaps), so each key starts with an unbalanced entry, and apps and users set unbalanced levels.
        // Nor do two levels of a sequence share the ratio of their channels: a level that is a copy of
        // another stream's own level scaled down is a ramp step of ours to the daemon (seed
        // 7707550057315619115: an app's 0.639/0.497 is the music entry's 0.9/0.7 at 71 %, taken for a
        // step of the earlier fade-out's). The real server has the same ambiguity (README, known gaps).
        var ratios = entries.map { $0.level.linearValues[1] / $0.level.linearValues[0] }
        func level() -> ChannelVolumes {
            while true {
                let a = 0.2 + Double(rng.next() % 800) / 1000
                let ratio = 0.5 + Double(rng.next() % 400_000) / 1_000_000
                guard ratios.allSatisfy({ abs($0 - ratio) > 0.002 }) else { continue }
                ratios.append(ratio)
                return ChannelVolumes(values: [CubicVolume.raw(linear: a), CubicVolume.raw(linear: a * ratio)])
            }
        }
        var steps: [Step] = []
        var at: Milliseconds = 0
        var next = 0
        var live: [String] = []
        var keyOf: [String: String] = [:]
        var alive = true
        var faded: [String: String] = [:]
        let count = 10 + Int(rng.next() % 50)
        for _ in 0..<count {
            let gap = pick([0, 10, 100, 400, 1200, 3000])
            // pipewire-pulse tells a late volume within milliseconds (at most 100 ms): before any step
            // further away, and after at most one step in between.
            for arrival in arrivals where gap > 10 || arrival.after == 0 {
                steps.append(Step(at: at, action: .volumeArrives(arrival.name, restoredNow: arrival.restoredNow)))
            }
            arrivals = gap > 10 ? [] : arrivals.filter { $0.after > 0 }.map { ($0.name, $0.after - 1, $0.restoredNow) }
            at += gap
            var action: Action
            switch rng.next() % 16 {
            case 0, 1:
                guard live.count < 4 else { continue }
                let name = "s\(next)"
                next += 1
                live.append(name)
                let key = pick(keys)
                keyOf[name] = key
                // Now and then right after the daemon wrote to another stream of its key, before the
                // server applied it (a start that overtakes an unmute: the soak).
                let late = lateness.next() % 100 < 30
                if late { arrivals.append((name, Int(lateness.next() % 2), restoring.next() % 2 == 0)) }
                let killed = alive && crashes.contains("kill") && startKills.next() % 100 < 3
                if killed { alive = false }
                action = .start(name, key: key, level: chance(30) ? level() : nil, muted: chance(5),
                                beforeWritesApplied: overtaking.next() % 100 < 25, volumeLate: late,
                                killedAsItStarts: killed)
            case 2, 3: guard !live.isEmpty else { continue }
                action = .ramp(pick(live), to: pick([0.05, 0.1, 0.316, 0.5]), steps: 1 + Int(rng.next() % 5))
            case 4: guard !live.isEmpty else { continue }; action = .ramp(pick(live), to: 1, steps: 1 + Int(rng.next() % 5))
            case 5:
                // One faded-out stream per key at a time: silence saved for a key is every stream's fade-out
                // end, and which stream's own level lies under it cannot be told.
                guard !live.isEmpty else { continue }
                let name = pick(live)
                guard let key = keyOf[name], !faded.values.contains(key) else { continue }
                faded[name] = key
                action = .fadeOut(name)
            case 6: guard !live.isEmpty else { continue }; action = .hold(pick(live))
            case 7:
                guard !live.isEmpty else { continue }
                let name = pick(live)
                faded[name] = nil
                action = .unmute(name)
            // Nothing changes a live stream while no daemon runs: a change of a stream the policy muted
            // saves its mute, ours, again, for streams that start later, and no journal tells it (open:
            // docs/how-it-works.md). Kill-mid-duck and the level its user set meanwhile are fixtures'.
            case 8: guard !live.isEmpty, alive else { continue }; action = .userLevel(pick(live), level())
            case 9:
                // Not while no daemon runs: a mute toggled then, on a stream the policy muted, or a mute
                // that a later stream of its key started with, cannot be told from the policy's own.
                guard !live.isEmpty, alive else { continue }
                action = .userMute(pick(live), chance(50))
            case 10: guard !live.isEmpty, alive else { continue }; action = .move(pick(live))
            case 11, 12:
                guard !live.isEmpty else { continue }
                let name = pick(live)
                live.removeAll { $0 == name }
                faded[name] = nil
                // A write lost as its stream ended is repaired by the daemon that sent it, or, killed before
                // the server answered it, by the next run from the journal entry kept until that answer.
                action = .end(name, lastWriteLost: chance(20))
            case 13:
                guard crashes.contains("kill") else { continue }
                alive = false
                action = .killDaemon
            case 14:
                alive = true
                action = .startDaemon
            default:
                guard crashes.contains("server"), chance(40) else { continue }
                // After a second of quiet: what WirePlumber brings back of the last second is the
                // settled-duck fixtures' (Tests/Fixtures/levels/duck-from-minutes-ago.toml).
                at += 1200
                live = []
                faded = [:]
                action = .restartServer
            }
            steps.append(Step(at: at, action: action))
        }
        steps += arrivals.map { Step(at: at, action: .volumeArrives($0.name, restoredNow: $0.restoredNow)) }
        return steps
    }

    /// Plays `steps` and the end of everything; returns the first invariant that did not hold.
    static func check(_ steps: [Step], saving: ServerSaving, control: Bool = false, trace: Bool = false) -> String? {
        var rehearsal = LevelsRehearsal(saving: saving, entries: entries, control: control)
        var now: Milliseconds = 0
        for step in steps {
            now = step.at
            _ = rehearsal.play(step.action, at: now)
            if trace { print(describe(rehearsal, after: step)) }
            if let broken = ownLevels(rehearsal, after: step) { return broken }
        }
        // Everything is over: the daemon runs, the policy's changes are undone (a held mute by its user,
        // who acts), every stream ends; a while later nothing of ours is saved.
        func play(_ action: Action) {
            _ = rehearsal.play(action, at: now)
            if trace { print(describe(rehearsal, after: Step(at: now, action: action))) }
        }
        now += 2000
        play(.startDaemon)
        for (name, index) in rehearsal.indexes.sorted(by: { $0.key < $1.key }) {
            guard let record = rehearsal.daemon.live[index] else { continue }
            if record.level.heldForLoss {
                play(.userMute(name, false))
            } else if record.level.policyMuted {
                play(.unmute(name))
            }
            if rehearsal.daemon.live[index].map({ $0.level.factor != 1 }) == true {
                play(.ramp(name, to: 1, steps: 1))
            }
        }
        now += 2000
        for name in rehearsal.indexes.keys.sorted() { play(.end(name, lastWriteLost: false)) }
        rehearsal.settle()
        if trace { print(describe(rehearsal, after: Step(at: now, action: .restartServer)).replacingOccurrences(of: "restartServer", with: "settled")) }
        for (key, entry) in rehearsal.server.entries.sorted(by: { $0.key < $1.key }) {
            if !entry.volume.matches(entry.trueVolume, tolerance: 2) {
                return "at the end, \(key) is saved at \(entry.volume); its user's level is \(entry.trueVolume)"
            }
            if entry.muted != entry.trueMuted {
                return "at the end, \(key) is saved \(entry.muted ? "muted" : "unmuted"); its user left it \(entry.trueMuted ? "muted" : "unmuted")"
            }
        }
        return nil
    }

    /// `LEVELS_TRACE=1` with `LEVELS_ONLY`: the shrunk sequence is played once more, printing the server's
    /// entries and streams and the daemon's records after each step (what a failure's cause is read from).
    static let trace = ProcessInfo.processInfo.environment["LEVELS_TRACE"] == "1"

    /// One step's world, for ``trace``.
    private static func describe(_ rehearsal: LevelsRehearsal, after step: Step) -> String {
        var lines = ["@\(step.at) \(step.action)"]
        for (key, entry) in rehearsal.server.entries.sorted(by: { $0.key < $1.key }) {
            lines.append("  entry \(key): \(entry)")
        }
        for (name, index) in rehearsal.indexes.sorted(by: { $0.key < $1.key }) {
            lines.append("  \(name) #\(index) server: \(rehearsal.server.streams[index].map { "\($0)" } ?? "gone")")
            lines.append("  \(name) #\(index) daemon: \(rehearsal.daemon.live[index].map { "\($0)" } ?? "none")")
        }
        for (index, entry) in rehearsal.daemon.journal.sorted(by: { $0.key < $1.key }) {
            lines.append("  journal #\(index): \(entry)")
        }
        return lines.joined(separator: "\n")
    }

    /// The own level the daemon takes for each stream it knows is its user's.
    private static func ownLevels(_ rehearsal: LevelsRehearsal, after step: Step) -> String? {
        guard rehearsal.daemon.connected else { return nil }
        for (name, index) in rehearsal.indexes.sorted(by: { $0.key < $1.key }) {
            guard let stream = rehearsal.server.streams[index], let record = rehearsal.daemon.live[index] else { continue }
            // A stream the server started at silence may have been given any fade-out's end of its key: its
            // own level is one of its key's own levels, but which one cannot be told.
            let silentStart = rehearsal.silentStarts.contains(index)
            // Told no volume yet (pipewire-pulse), the daemon takes no own level for it.
            if !silentStart, !record.volumePending, !record.level.own.matches(stream.trueOwn, tolerance: 2) {
                return "after \(step.action) at \(step.at) ms, the daemon takes \(record.level.own) for \(name)'s own level; its user's is \(stream.trueOwn)"
            }
            if record.level.policyMuted == false, !record.volumePending, stream.muted, !stream.trueMuted {
                return "after \(step.action) at \(step.at) ms, \(name) is muted by us with no policy mute on record"
            }
        }
        return nil
    }

    /// Removes steps while the sequence still fails.
    static func shrink(_ steps: [Step], saving: ServerSaving) -> [Step] {
        var current = steps
        var changed = true
        while changed {
            changed = false
            var i = 0
            while i < current.count {
                var candidate = current
                candidate.remove(at: i)
                if check(candidate, saving: saving) != nil {
                    current = candidate
                    changed = true
                } else {
                    i += 1
                }
            }
        }
        return current
    }

    /// The sequence as a levels fixture (docs/fixtures.md), for `audio-policyd test`.
    static func fixture(_ steps: [Step], saving: ServerSaving, violation: String) -> String {
        func level(_ volume: ChannelVolumes) -> String {
            "[" + volume.linearValues.map { "\(($0 * 10000).rounded() / 10000)" }.joined(separator: ", ") + "]"
        }
        var text = "description = \"Found by the levels property run: \(violation.replacingOccurrences(of: "\"", with: "'"))\"\nserver = \"\(saving.rawValue)\"\n"
        for entry in entries {
            text += "\n[[saved]]\nkey = \"\(entry.key)\"\nlevel = \(level(entry.level))\n"
        }
        for step in steps {
            var lines: [String] = []
            switch step.action {
            case let .start(name, key, appLevel, muted, beforeWritesApplied, volumeLate, killedAsItStarts, _):
                lines = ["start = \"\(name)\"", "key = \"\(key)\""]
                if let appLevel { lines.append("level = \(level(appLevel))") }
                if muted { lines.append("muted = true") }
                if beforeWritesApplied { lines.append("before-writes-applied = true") }
                if volumeLate, saving == .wirePlumber { lines.append("volume-late = true") }
                if killedAsItStarts { lines.append("killed-as-it-starts = true") }
            case let .volumeArrives(name, restoredNow):
                guard saving == .wirePlumber else { continue }
                lines = ["volume-arrives = \"\(name)\""]
                if restoredNow { lines.append("restored-now = true") }
            case let .ramp(name, to, count):
                lines = to == 1 ? ["restore = \"\(name)\""] : ["duck = \"\(name)\"", "to = \(to)"]
                lines.append("steps = \(count)")
            case let .fadeOut(name): lines = ["fade-out = \"\(name)\""]
            case let .hold(name): lines = ["hold = \"\(name)\""]
            case let .unmute(name): lines = ["unmute = \"\(name)\""]
            case let .userLevel(name, volume): lines = ["user-level = \"\(name)\"", "level = \(level(volume))"]
            case let .userMute(name, muted): lines = ["user-mute = \"\(name)\"", "muted = \(muted)"]
            case let .move(name): lines = ["move = \"\(name)\""]
            case let .end(name, lost): lines = ["end = \"\(name)\""] + (lost ? ["last-write-lost = true"] : [])
            case .killDaemon: lines = ["kill = \"daemon\""]
            case .startDaemon: lines = ["restart = \"daemon\""]
            case .restartServer: lines = ["restart = \"server\""]
            case .expectSaved, .expectStream: continue
            }
            text += "\n[[event]]\nat = \(step.at)\n" + lines.joined(separator: "\n") + "\n"
        }
        return text
    }
}
