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
///
/// [[rule]]               # checked in order; the first that matches wins
/// name = "calls"         # optional, for `explain` and logs
/// match = { "media.role" = ["phone", "communication"] }   # all keys must match; globs, any of an array
/// class = "call"
/// spoken = false         # true: paused and resumed instead of ducked
/// unfocused = "mute"     # optional: over the class's `unfocused`, for this rule's streams
/// ```
///
/// Durations are integers (ms) or strings with a unit (`"500ms"`, `"1.5s"`). Globs ignore case; the
/// match key `app` stands for any of ``PropertyMatcher/appKeys``. Absent class keys default to grace
/// 1500, duck -14 dB, duck-ramp 500, restore-ramp 1000, hold 500, release-after 1000 (never for call
/// and mix).
public enum PolicyLoader {
    /// Parses and validates a policy; `file` is used in error locations and as ``Policy/source``.
    public static func load(text: String, file: String) throws(LocatedErrors) -> Policy {
        let (root, reader) = try TOMLReader.parse(text: text, file: file)
        reader.checkKeys(root, at: .root, allowed: ["defaults", "class", "rule", "outputs"], in: "the policy")

        let drafts = readClasses(root, reader)
        let classes = rankClasses(drafts, reader)
        let names = classes.keys.sorted()
        let defaults = readDefaults(root, classNames: names, reader)
        let rules = readRules(root, classNames: names, reader)
        let outputs = readOutputs(root, reader)

        try reader.throwIfFailed()
        return Policy(source: file, classes: classes, rules: rules, defaultClass: defaults.defaultClass,
                      muteFade: defaults.muteFade, pauseTimeout: defaults.pauseTimeout, outputs: outputs)
    }

    static let classKeys = ["kind", "above", "grace", "duck", "duck-ramp", "restore-ramp", "hold", "release-after",
                            "on-output-loss", "unfocused", "unfocused-duck"]
    static let ruleKeys = ["name", "match", "class", "spoken", "unfocused"]
    static let defaultsKeys = ["class", "mute-fade", "pause-timeout"]
    static let outputsKeys = ["switch-window", "resume-when-back"]
}

// MARK: - Classes

extension PolicyLoader {
    /// A class as written, before `above` is resolved into `outranks` and `rank`.
    private struct ClassDraft {
        var value: InterruptionClass
        var above: [(name: String, path: TOMLKeyPath)]
        var aboveKey: SourceLocation
    }

    private static func readClasses(_ root: TOMLTable, _ reader: TOMLReader) -> [String: ClassDraft] {
        let classesPath: TOMLKeyPath = ["class"]
        guard let table = reader.table(root, "class", at: .root,
                                       expected: "`class` must hold tables like [class.primary]") else { return [:] }
        var drafts: [String: ClassDraft] = [:]
        for name in reader.keys(of: table, at: classesPath) {
            let path = classesPath.appending(name)
            guard let classTable = reader.table(table, name, at: classesPath,
                                                expected: "`\(name)` must be a table like [\(path)]") else { continue }
            drafts[name] = readClass(name, classTable, at: path, reader)
        }
        return drafts
    }

    private static func readClass(_ name: String, _ table: TOMLTable, at path: TOMLKeyPath,
                                  _ reader: TOMLReader) -> ClassDraft {
        reader.checkKeys(table, at: path, allowed: classKeys, in: "[\(path)]")
        var value = InterruptionClass(name: name, kind: .primary, location: reader.map.tableLocation(path))

        if let kind = reader.string(table, "kind", at: path) {
            if let known = InterruptionKind(rawValue: kind) {
                value.kind = known
            } else {
                let kinds = InterruptionKind.allCases.map(\.rawValue)
                let hint = closest(to: kind, in: kinds).map { " (did you mean \"\($0)\"?)" } ?? ""
                reader.fail(reader.map.valueLocation(path.appending("kind")),
                            "unknown kind \"\(kind)\"\(hint); kinds: \(kinds.joined(separator: ", "))")
            }
        } else if table["kind"] == nil {
            if let implied = InterruptionKind(rawValue: name) {
                value.kind = implied
            } else {
                reader.fail(reader.map.tableLocation(path),
                            "class \"\(name)\" needs a `kind`: primary, call, short, ambient or mix")
            }
        }

        var above: [(name: String, path: TOMLKeyPath)] = []
        let abovePath = path.appending("above")
        if let array = reader.array(table, "above", at: path,
                                    expected: "`above` must be an array of class names") {
            for (index, element) in array.enumerated() {
                if let other = element.string {
                    above.append((other, abovePath.appending(index)))
                } else {
                    reader.fail(reader.map.valueLocation(abovePath.appending(index)),
                                "`above` must list class names (strings), got \(TOMLReader.typeName(element))")
                }
            }
        }

        value.grace = reader.duration(table, "grace", at: path) ?? value.grace
        value.duck = reader.level(table, "duck", at: path) ?? value.duck
        value.duckRamp = reader.duration(table, "duck-ramp", at: path) ?? value.duckRamp
        value.restoreRamp = reader.duration(table, "restore-ramp", at: path) ?? value.restoreRamp
        value.hold = reader.duration(table, "hold", at: path) ?? value.hold
        value.releaseAfter = InterruptionClass.defaultReleaseAfter(value.kind)
        if table["release-after"]?.string == "never" {
            value.releaseAfter = nil
        } else if let releaseAfter = reader.duration(table, "release-after", at: path) {
            value.releaseAfter = releaseAfter
        }
        value.onOutputLoss = OutputLossAction.defaultFor(value.kind)
        if let action = reader.string(table, "on-output-loss", at: path) {
            if let known = OutputLossAction(rawValue: action) {
                value.onOutputLoss = known
            } else {
                let actions = OutputLossAction.allCases.map(\.rawValue)
                let hint = closest(to: action, in: actions).map { " (did you mean \"\($0)\"?)" } ?? ""
                reader.fail(reader.map.valueLocation(path.appending("on-output-loss")),
                            "unknown `on-output-loss` \"\(action)\"\(hint); one of: \(actions.joined(separator: ", "))")
            }
        }
        value.unfocused = readUnfocused(table, at: path, reader) ?? value.unfocused
        value.unfocusedDuck = reader.level(table, "unfocused-duck", at: path) ?? value.unfocusedDuck
        return ClassDraft(value: value, above: above, aboveKey: reader.map.keyLocation(abovePath))
    }

    /// Checks `above`, rejects cycles, and fills in `outranks` (transitive) and `rank` (height).
    private static func rankClasses(_ drafts: [String: ClassDraft], _ reader: TOMLReader) -> [String: InterruptionClass] {
        let names = drafts.keys.sorted()
        var edges: [String: [String]] = [:]
        for name in names {
            guard let draft = drafts[name] else { continue }
            var targets: [String] = []
            for (other, path) in draft.above {
                if drafts[other] == nil {
                    reader.fail(reader.map.valueLocation(path), unknownClassMessage(other, defined: names))
                } else if !targets.contains(other) {
                    targets.append(other)
                }
            }
            edges[name] = targets
        }

        reportCycles(names: names, edges: edges) { cycle in
            guard let first = cycle.first, let draft = drafts[first] else { return }
            reader.fail(draft.aboveKey, "priority cycle: " + cycle.joined(separator: " > "))
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
            guard var value = drafts[name]?.value else { continue }
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

    static func unknownClassMessage(_ name: String, defined: [String]) -> String {
        guard !defined.isEmpty else { return "unknown class \"\(name)\"; no classes are defined" }
        let hint = closest(to: name, in: defined).map { " (did you mean \"\($0)\"?)" } ?? ""
        return "unknown class \"\(name)\"\(hint); defined classes: \(defined.joined(separator: ", "))"
    }
}

// MARK: - Defaults

extension PolicyLoader {
    /// What `[defaults]` sets: the class of streams no rule matches, and the mute fallback's timing.
    private struct Defaults {
        var defaultClass = "primary"
        var muteFade: Milliseconds = 500
        var pauseTimeout: Milliseconds = 1000
    }

    private static func readDefaults(_ root: TOMLTable, classNames: [String], _ reader: TOMLReader) -> Defaults {
        let path: TOMLKeyPath = ["defaults"]
        var defaults = Defaults()
        guard let table = reader.table(root, "defaults", at: .root, expected: "`defaults` must be a table") else {
            if root["defaults"] == nil, !classNames.contains("primary") {
                reader.fail(reader.map.tableLocation(path),
                            "no class \"primary\" for streams no rule matches; define [class.primary] or set `class` in [defaults]")
            }
            return defaults
        }
        reader.checkKeys(table, at: path, allowed: defaultsKeys, in: "[defaults]")
        defaults.muteFade = reader.duration(table, "mute-fade", at: path) ?? defaults.muteFade
        defaults.pauseTimeout = reader.duration(table, "pause-timeout", at: path) ?? defaults.pauseTimeout
        if let name = reader.string(table, "class", at: path) {
            if !classNames.contains(name) {
                reader.fail(reader.map.valueLocation(path.appending("class")),
                            unknownClassMessage(name, defined: classNames))
            }
            defaults.defaultClass = name
        } else if table["class"] == nil, !classNames.contains("primary") {
            reader.fail(reader.map.tableLocation(path),
                        "no class \"primary\" for streams no rule matches; define [class.primary] or set `class` in [defaults]")
        }
        return defaults
    }
}

// MARK: - Outputs

extension PolicyLoader {
    /// `[outputs]`: `switch-window` (a duration) and `resume-when-back` (a duration, or `"never"`).
    private static func readOutputs(_ root: TOMLTable, _ reader: TOMLReader) -> OutputPolicy {
        let path: TOMLKeyPath = ["outputs"]
        var outputs = OutputPolicy()
        guard let table = reader.table(root, "outputs", at: .root, expected: "`outputs` must be a table") else {
            return outputs
        }
        reader.checkKeys(table, at: path, allowed: outputsKeys, in: "[outputs]")
        outputs.switchWindow = reader.duration(table, "switch-window", at: path) ?? outputs.switchWindow
        if table["resume-when-back"]?.string == "never" {
            outputs.resumeWhenBack = nil
        } else if let after = reader.duration(table, "resume-when-back", at: path) {
            outputs.resumeWhenBack = after
        }
        return outputs
    }
}

// MARK: - Rules

extension PolicyLoader {
    private static func readRules(_ root: TOMLTable, classNames: [String], _ reader: TOMLReader) -> [Rule] {
        let rulesPath: TOMLKeyPath = ["rule"]
        guard let array = reader.array(root, "rule", at: .root,
                                       expected: "`rule` must be an array of tables, written [[rule]]") else { return [] }
        var rules: [Rule] = []
        for (index, element) in array.enumerated() {
            let path = rulesPath.appending(index)
            guard let table = element.table else {
                reader.fail(reader.map.valueLocation(path),
                            "each rule must be a table, written [[rule]], got \(TOMLReader.typeName(element))")
                continue
            }
            if let rule = readRule(table, at: path, classNames: classNames, reader) { rules.append(rule) }
        }
        return rules
    }

    private static func readRule(_ table: TOMLTable, at path: TOMLKeyPath, classNames: [String],
                                 _ reader: TOMLReader) -> Rule? {
        reader.checkKeys(table, at: path, allowed: ruleKeys, in: "[[rule]]")
        let location = reader.map.tableLocation(path)
        let name = reader.string(table, "name", at: path)
        let spoken = reader.bool(table, "spoken", at: path) ?? false
        let unfocused = readUnfocused(table, at: path, reader)

        var matchers: [PropertyMatcher]?
        if table["match"] == nil {
            reader.fail(location, "rule has no `match`")
        } else if let match = reader.table(table, "match", at: path,
                                           expected: "`match` must be a table like { \"media.role\" = \"music\" }") {
            matchers = readMatchers(match, at: path.appending("match"), reader)
        }

        var className: String?
        if table["class"] == nil {
            reader.fail(location, "rule has no `class`")
        } else if let written = reader.string(table, "class", at: path) {
            if classNames.contains(written) {
                className = written
            } else {
                reader.fail(reader.map.valueLocation(path.appending("class")),
                            unknownClassMessage(written, defined: classNames))
            }
        }

        guard let matchers, let className else { return nil }
        return Rule(name: name, matchers: matchers, className: className, spoken: spoken, unfocused: unfocused,
                    location: location)
    }

    /// `unfocused = "duck" | "mute" | "nothing"` in a class or a rule; nil when absent or wrong (reported).
    private static func readUnfocused(_ table: TOMLTable, at path: TOMLKeyPath, _ reader: TOMLReader) -> UnfocusedAction? {
        guard let written = reader.string(table, "unfocused", at: path) else { return nil }
        if let known = UnfocusedAction(rawValue: written) { return known }
        let actions = UnfocusedAction.allCases.map(\.rawValue)
        let hint = closest(to: written, in: actions).map { " (did you mean \"\($0)\"?)" } ?? ""
        reader.fail(reader.map.valueLocation(path.appending("unfocused")),
                    "unknown `unfocused` \"\(written)\"\(hint); one of: \(actions.joined(separator: ", "))")
        return nil
    }

    private static func readMatchers(_ match: TOMLTable, at path: TOMLKeyPath,
                                     _ reader: TOMLReader) -> [PropertyMatcher]? {
        guard !match.isEmpty else {
            reader.fail(reader.map.valueLocation(path), "`match` is empty; a rule needs at least one property to match")
            return nil
        }
        var matchers: [PropertyMatcher] = []
        var valid = true
        for key in reader.keys(of: match, at: path) {
            guard let value = match[key] else { continue }
            let keyPath = path.appending(key)
            if let pattern = value.string {
                matchers.append(PropertyMatcher(key: key, patterns: [Glob(pattern)]))
            } else if let array = value.array {
                var patterns: [Glob] = []
                for (index, element) in array.enumerated() {
                    if let pattern = element.string {
                        patterns.append(Glob(pattern))
                    } else {
                        valid = false
                        reader.fail(reader.map.valueLocation(keyPath.appending(index)),
                                    "`match` patterns must be strings, got \(TOMLReader.typeName(element))")
                    }
                }
                if array.isEmpty {
                    valid = false
                    reader.fail(reader.map.valueLocation(keyPath),
                                "no patterns for `\(key)` in `match`; an empty array matches nothing")
                }
                matchers.append(PropertyMatcher(key: key, patterns: patterns))
            } else if value.table != nil {
                valid = false
                reader.fail(reader.map.keyLocation(keyPath),
                            "`\(key)` in `match` is a table; quote property names that contain dots, as in \"media.role\" = \"music\"")
            } else {
                valid = false
                reader.fail(reader.map.valueLocation(keyPath),
                            "`match` values must be a glob or an array of globs, got \(TOMLReader.typeName(value))")
            }
        }
        return valid ? matchers : nil
    }
}
