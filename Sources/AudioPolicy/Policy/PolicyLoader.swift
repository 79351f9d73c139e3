import TOMLKit

/// Loads a ``Policy`` from TOML, rejecting a bad one with every error found, each at its `file:line:column`.
///
/// ```toml
/// [defaults]
/// class = "primary"      # class of a stream no rule matches (default "primary"; must be defined)
/// mute-fade = 500        # fade before the mute fallback mutes / after it unmutes (default 500 ms)
///
/// [class.NAME]           # kind may be left out when NAME is primary, call, short, ambient or mix
/// kind = "short"         # primary | call | short | ambient | mix
/// above = ["primary"]    # classes this one outranks (transitively); cycles are errors
/// grace = 1500           # primary: how long a new stream ducks others before it pauses them
/// duck = "-14 dB"        # level to duck to: "-14 dB" (-60…0 dB) or linear 0 < x <= 1
/// duck-ramp = 500        # ramp down
/// restore-ramp = 1000    # ramp back up
/// hold = 500             # how long the effect lingers after the interruption ends
/// release-after = 1000   # silent this long, a stream stops interrupting ("never": calls' default)
/// unfocused = "duck"     # none of its app's windows has focus: duck | mute | nothing (default)
/// unfocused-duck = "-12 dB"  # the level of that duck (its ramps: duck-ramp, restore-ramp)
/// closed-window = "pause"    # Now Playing and its app's last window closes: pause | nothing (default)
///
/// [[rule]]               # checked in order; the first that matches wins
/// name = "calls"         # optional, for `explain` and logs
/// match = { "media.role" = ["phone", "communication"] }   # all keys must match; globs, any of an array
/// class = "call"
/// spoken = false         # true: paused and resumed instead of ducked
/// unfocused = "mute"     # optional: over the class's `unfocused`, for this rule's streams
/// closed-window = "pause"  # optional: over the class's `closed-window`
/// ```
///
/// Durations are integers (ms) or strings with a unit (`"500ms"`, `"1.5s"`). Globs ignore case; the
/// match key `app` stands for any of ``PropertyMatcher/appKeys``. Absent class keys default to grace
/// 1500, duck -14 dB, duck-ramp 500, restore-ramp 1000, hold 500, release-after 1000 (never for call
/// and mix).
///
/// Drop-ins (docs/policy.md, "Drop-ins") are merged over the files before them, later files winning:
/// `[defaults]`, `[outputs]` and each `[class.NAME]` key by key (a new class is added); a drop-in's
/// rules are tried before those of every file before it, in the order it writes them; and
/// `[drop-in] disable-rules = ["NAME", …]` turns off the rules of earlier files with that `name`.
/// Whether classes and rules refer to classes that exist, and priority cycles, are checked on the
/// merged result; every error stays at its own `FILE:LINE:COLUMN`.
public enum PolicyLoader {
    /// Parses and validates a policy; `file` is used in error locations and as ``Policy/source``. A
    /// file with a `[drop-in]` table is a drop-in over the embedded default.
    public static func load(text: String, file: String) throws(LocatedErrors) -> Policy {
        try load([PolicyText(text: text, file: file, role: .policy)])
    }

    /// Merges a base policy and its drop-ins, in order: `texts[0]` is the base (a whole policy, or with
    /// `[drop-in]` a drop-in over the embedded default); the others are drop-ins whatever they say.
    /// Every file's errors are reported, each in its own file, files in order.
    public static func load(_ texts: [PolicyText]) throws(LocatedErrors) -> Policy {
        guard let base = texts.first else { return Policy.embeddedDefault }
        var layers: [PolicyLayer] = []
        var errors: [LocatedError] = []
        var unreadable = false
        for (index, text) in texts.enumerated() {
            do {
                let layer = try PolicyLayer.read(text: text.text, file: text.file,
                                                 role: index == 0 ? text.role : .dropIn)
                layers.append(layer)
                errors += layer.errors
            } catch {
                errors += error.errors
                unreadable = true
            }
        }
        if let first = layers.first, first.isDropIn, texts.count == layers.count {
            layers.insert(embeddedDefaultLayer, at: 0)
        }
        // A file that does not parse says nothing of its classes: what refers to them would be wrong.
        if !unreadable {
            let merged = Merge(layers: layers)
            errors += merged.errors
            if errors.isEmpty {
                return Policy(source: base.file, classes: merged.classes, rules: merged.rules,
                              defaultClass: merged.defaultClass, muteFade: merged.muteFade,
                              pauseTimeout: merged.pauseTimeout, outputs: merged.outputs,
                              audibility: merged.audibility, files: layers.map(\.file))
            }
        }
        throw LocatedErrors(ordered(errors, files: [Policy.embeddedDefaultSource] + texts.map(\.file)))
    }

    /// The embedded default as a layer, for drop-ins laid over it.
    static let embeddedDefaultLayer: PolicyLayer = {
        do {
            return try PolicyLayer.read(text: Policy.embeddedDefaultText, file: Policy.embeddedDefaultSource,
                                        role: .policy)
        } catch {
            preconditionFailure("the embedded default policy does not parse (fix policies/default.toml):\n\(error)")
        }
    }()

    /// Errors without repeats, by file (in the order the files are merged), then line and column.
    private static func ordered(_ errors: [LocatedError], files: [String]) -> [LocatedError] {
        var rank: [String: Int] = [:]
        for (index, file) in files.enumerated() where rank[file] == nil { rank[file] = index }
        var seen = Set<LocatedError>()
        let unique = errors.filter { seen.insert($0).inserted }
        return unique.enumerated().sorted { lhs, rhs in
            let (l, r) = (lhs.element.location, rhs.element.location)
            return (rank[l.file] ?? Int.max, l.line, l.column, lhs.offset)
                < (rank[r.file] ?? Int.max, r.line, r.column, rhs.offset)
        }.map(\.element)
    }

    static func unknownClassMessage(_ name: String, defined: [String]) -> String {
        guard !defined.isEmpty else { return "unknown class \"\(name)\"; no classes are defined" }
        let hint = closest(to: name, in: defined).map { " (did you mean \"\($0)\"?)" } ?? ""
        return "unknown class \"\(name)\"\(hint); defined classes: \(defined.joined(separator: ", "))"
    }
}

// MARK: - Merging

extension PolicyLoader {
    /// The layers merged, later over earlier, and checked as one policy: what needs every file.
    struct Merge {
        var classes: [String: InterruptionClass] = [:]
        var rules: [Rule] = []
        var defaultClass = "primary"
        var muteFade: Milliseconds = 500
        var pauseTimeout: Milliseconds = 1000
        var outputs = OutputPolicy()
        var audibility = AudibilityThresholds()
        var errors: [LocatedError] = []
        /// Each file's place in the merge, to blame a cycle on the latest file that closes it.
        private var fileRank: [String: Int] = [:]

        init(layers: [PolicyLayer]) {
            for (index, layer) in layers.enumerated() { fileRank[layer.file] = index }
            var settings: [String: ClassSettings] = [:]
            for layer in layers {
                for written in layer.classes {
                    settings[written.name] = settings[written.name].map { $0.overridden(by: written) } ?? written
                }
            }
            classes = rank(settings)
            let names = classes.keys.sorted()
            mergeDefaults(layers, classNames: names)
            mergeOutputs(layers)
            mergeAudibility(layers)
            rules = mergeRules(layers, classNames: names)
        }

        private mutating func fail(_ location: SourceLocation, _ message: String) {
            errors.append(LocatedError(location, message))
        }

        // MARK: Classes

        /// Resolves kinds, checks `above`, rejects cycles, and fills in `outranks` (transitive) and `rank`.
        private mutating func rank(_ settings: [String: ClassSettings]) -> [String: InterruptionClass] {
            let names = settings.keys.sorted()
            var edges: [String: [String]] = [:]
            var values: [String: InterruptionClass] = [:]
            for name in names {
                guard let written = settings[name] else { continue }
                var kind = written.kind?.value ?? .primary
                if written.kind == nil, !written.kindWritten {
                    if let implied = InterruptionKind(rawValue: name) {
                        kind = implied
                    } else {
                        fail(written.location, "class \"\(name)\" needs a `kind`: primary, call, short, ambient or mix")
                    }
                }
                values[name] = written.interruptionClass(kind: kind)
                var targets: [String] = []
                for other in written.above?.value ?? [] {
                    if settings[other.value] == nil {
                        fail(other.location, PolicyLoader.unknownClassMessage(other.value, defined: names))
                    } else if !targets.contains(other.value) {
                        targets.append(other.value)
                    }
                }
                edges[name] = targets
            }

            // Blamed on the `above` of the latest file among the cycle's classes: the drop-in that closed it,
            // not the default under it.
            let fileRank = self.fileRank
            Self.reportCycles(names: names, edges: edges) { cycle in
                let blamed = cycle.dropLast().compactMap { settings[$0]?.above?.location }
                    .enumerated().max { lhs, rhs in
                        (fileRank[lhs.element.file] ?? 0, -lhs.offset) < (fileRank[rhs.element.file] ?? 0, -rhs.offset)
                    }?.element
                guard let first = cycle.first, let written = settings[first] else { return }
                fail(blamed ?? written.above?.location ?? written.location, "priority cycle: " + cycle.joined(separator: " > "))
            }

            var ranks: [String: Int] = [:]
            var visiting: Set<String> = []
            func rank(_ name: String) -> Int {
                if let known = ranks[name] { return known }
                guard visiting.insert(name).inserted else { return 0 } // a cycle, already reported
                let height = (edges[name] ?? []).map { rank($0) + 1 }.max() ?? 0
                visiting.remove(name)
                ranks[name] = height
                return height
            }

            var classes: [String: InterruptionClass] = [:]
            for name in names {
                guard var value = values[name] else { continue }
                var reached: Set<String> = []
                var pending = edges[name] ?? []
                while let next = pending.popLast() {
                    if reached.insert(next).inserted { pending += edges[next] ?? [] }
                }
                value.outranks = reached
                value.rank = rank(name)
                classes[name] = value
            }
            return classes
        }

        /// Calls `report` once per back edge found by a depth-first walk, with the cycle it closes written
        /// from the class where the walk entered it: `["call", "short", "call"]`.
        private static func reportCycles(names: [String], edges: [String: [String]], report: ([String]) -> Void) {
            var done: Set<String> = []
            var stack: [String] = []
            func visit(_ name: String) {
                stack.append(name)
                for next in edges[name] ?? [] {
                    if let start = stack.firstIndex(of: next) {
                        report(Array(stack[start...]) + [next])
                    } else if !done.contains(next) {
                        visit(next)
                    }
                }
                stack.removeLast()
                done.insert(name)
            }
            for name in names where !done.contains(name) { visit(name) }
        }

        // MARK: Defaults and outputs

        private mutating func mergeDefaults(_ layers: [PolicyLayer], classNames: [String]) {
            var chosen: Written<String>?
            var classWritten = false, mistyped = false
            var blame = layers.first?.defaults.location
            for layer in layers {
                let defaults = layer.defaults
                chosen = defaults.defaultClass ?? chosen
                muteFade = defaults.muteFade?.value ?? muteFade
                pauseTimeout = defaults.pauseTimeout?.value ?? pauseTimeout
                classWritten = classWritten || defaults.classWritten
                if defaults.present { blame = defaults.location }
                mistyped = mistyped || (defaults.present && !defaults.isTable)
            }
            if let chosen {
                if !classNames.contains(chosen.value) {
                    fail(chosen.location, PolicyLoader.unknownClassMessage(chosen.value, defined: classNames))
                }
                defaultClass = chosen.value
            } else if !classWritten, !classNames.contains("primary"), let blame, !mistyped {
                fail(blame, "no class \"primary\" for streams no rule matches; define [class.primary] or set `class` in [defaults]")
            }
        }

        private mutating func mergeOutputs(_ layers: [PolicyLayer]) {
            for layer in layers {
                outputs.switchWindow = layer.outputs.switchWindow?.value ?? outputs.switchWindow
                if let resume = layer.outputs.resumeWhenBack { outputs.resumeWhenBack = resume.value }
            }
        }

        /// `[audibility]` key by key, later files over earlier ones; sound must be louder than silence,
        /// with the blame on the threshold written last.
        private mutating func mergeAudibility(_ layers: [PolicyLayer]) {
            var last: SourceLocation?
            for layer in layers {
                let written = layer.audibility
                audibility.heardAbove = written.heardAbove?.value ?? audibility.heardAbove
                audibility.silentBelow = written.silentBelow?.value ?? audibility.silentBelow
                audibility.silenceAfter = written.silenceAfter?.value ?? audibility.silenceAfter
                last = [written.heardAbove?.location, written.silentBelow?.location].compactMap { $0 }
                    .max { ($0.line, $0.column) < ($1.line, $1.column) } ?? last
            }
            if audibility.silentBelow > audibility.heardAbove, let last {
                fail(last, "[audibility] `silent-below` (\(Int(audibility.silentBelow.decibels.rounded())) dB) must not be above "
                    + "`heard-above` (\(Int(audibility.heardAbove.decibels.rounded())) dB): a peak between them keeps a stream as it was")
            }
        }

        // MARK: Rules

        /// Each layer's rules before those of the layers under it, less the ones later layers disable.
        private mutating func mergeRules(_ layers: [PolicyLayer], classNames: [String]) -> [Rule] {
            var drafts: [PolicyLayer.RuleDraft] = []
            var named: [String] = []  // every rule name of the layers so far, disabled ones too
            for layer in layers {
                for disabled in layer.disabledRules {
                    guard named.contains(disabled.value) else {
                        let hint = closest(to: disabled.value, in: named).map { " (did you mean \"\($0)\"?)" } ?? ""
                        let whose = named.isEmpty ? "; the files before this one have no named rules"
                            : "; `audio-policyd explain --rules` lists the rules in force"
                        fail(disabled.location, "no rule named \"\(disabled.value)\" to disable\(hint) in the files before this one\(whose)")
                        continue
                    }
                    drafts.removeAll { $0.name == disabled.value }
                }
                drafts = layer.rules + drafts
                named += layer.rules.compactMap(\.name).filter { !named.contains($0) }
            }
            var rules: [Rule] = []
            for draft in drafts {
                guard let written = draft.className else { continue }
                guard classNames.contains(written.value) else {
                    fail(written.location, PolicyLoader.unknownClassMessage(written.value, defined: classNames))
                    continue
                }
                guard let matchers = draft.matchers else { continue }
                // A capture interrupts for as long as it records; pausing for good and taking Now Playing,
                // as media does, is nothing a microphone should do.
                if matchers.contains(where: { $0.key == Rule.captureKey }), classes[written.value]?.kind == .primary {
                    fail(written.location, "class \"\(written.value)\" is of kind primary, which a rule for captures "
                        + "(`capture` in `match`) cannot name; use a class of kind short (ducks) or call (pauses and resumes)")
                    continue
                }
                rules.append(Rule(name: draft.name, matchers: matchers, className: written.value, spoken: draft.spoken,
                                  unfocused: draft.unfocused, closedWindow: draft.closedWindow,
                                  location: draft.location))
            }
            return rules
        }
    }
}
