import TOMLKit

/// What one policy file says, checked on its own: every key, type and value, each error at its place
/// in that file. What needs the other files — whether a class named in `above`, a rule or `[defaults]`
/// exists, priority cycles, a rule to disable — is checked once all layers are merged
/// (``PolicyLoader``), so a drop-in may name the default's classes and rules.
struct PolicyLayer: Sendable {
    var file: String
    /// A drop-in (by its place or its `[drop-in]` table): laid over the files before it.
    var isDropIn: Bool
    var classes: [ClassSettings] = []
    var rules: [RuleDraft] = []
    var defaults = DefaultsSettings()
    var outputs = OutputsSettings()
    var audibility = AudibilitySettings()
    /// `[drop-in] disable-rules`: names of rules of the files before this one to turn off.
    var disabledRules: [Written<String>] = []
    /// Where this file's key, type and value errors are, in file order.
    var errors: [LocatedError] = []

    static let rootKeys = ["defaults", "class", "rule", "outputs", "audibility", "drop-in"]
    static let classKeys = ["kind", "above", "grace", "duck", "duck-ramp", "restore-ramp", "hold", "release-after",
                            "on-output-loss", "unfocused", "unfocused-duck", "closed-window"]
    static let ruleKeys = ["name", "match", "class", "spoken", "unfocused", "closed-window"]
    static let defaultsKeys = ["class", "mute-fade", "pause-timeout"]
    static let outputsKeys = ["switch-window", "resume-when-back"]
    static let audibilityKeys = ["heard-above", "silent-below", "silence-after"]
    static let dropInKeys = ["disable-rules"]

    /// `[defaults]` as one file wrote it.
    struct DefaultsSettings: Sendable {
        var defaultClass: Written<String>?
        var muteFade: Written<Milliseconds>?
        var pauseTimeout: Written<Milliseconds>?
        /// The file has `[defaults]` (as a table or not) / a `class` key in it (valid or not): either
        /// way it is not missing, and no "no class primary" is said for it.
        var present = false
        /// `defaults` is a table (present but not one: reported, and no "no class primary" either).
        var isTable = false
        var classWritten = false
        /// Where to blame a missing default class on: the `[defaults]` header, else the file's start.
        var location = SourceLocation(file: "", line: 1, column: 1)
    }

    /// `[outputs]` as one file wrote it.
    struct OutputsSettings: Sendable {
        var switchWindow: Written<Milliseconds>?
        /// `"never"` is `nil` inside.
        var resumeWhenBack: Written<Milliseconds?>?
    }

    /// `[audibility]` as one file wrote it.
    struct AudibilitySettings: Sendable {
        var heardAbove: Written<Level>?
        var silentBelow: Written<Level>?
        var silenceAfter: Written<Milliseconds>?
    }

    /// One `[[rule]]` as written, its class not yet looked up. `matchers` is nil when `match` is wrong
    /// or missing (reported): the rule is then left out.
    struct RuleDraft: Sendable {
        var name: String?
        var matchers: [PropertyMatcher]?
        var className: Written<String>?
        var spoken: Bool
        var unfocused: UnfocusedAction?
        var closedWindow: ClosedWindowAction?
        var location: SourceLocation
    }

    /// Parses `text` and reads it; a syntax error throws (nothing else can be read from the file).
    static func read(text: String, file: String, role: PolicyText.Role) throws(LocatedErrors) -> PolicyLayer {
        let (root, reader) = try TOMLReader.parse(text: text, file: file)
        reader.checkKeys(root, at: .root, allowed: rootKeys, in: "the policy")
        var layer = PolicyLayer(file: file, isDropIn: role == .dropIn || root["drop-in"] != nil)
        layer.classes = readClasses(root, reader)
        layer.defaults = readDefaults(root, reader)
        layer.rules = readRules(root, reader)
        layer.outputs = readOutputs(root, reader)
        layer.audibility = readAudibility(root, reader)
        layer.disabledRules = readDropIn(root, reader)
        layer.errors = reader.errors
        return layer
    }
}

// MARK: - Classes

extension PolicyLayer {
    private static func readClasses(_ root: TOMLTable, _ reader: TOMLReader) -> [ClassSettings] {
        let classesPath: TOMLKeyPath = ["class"]
        guard let table = reader.table(root, "class", at: .root,
                                       expected: "`class` must hold tables like [class.primary]") else { return [] }
        var classes: [ClassSettings] = []
        for name in reader.keys(of: table, at: classesPath) {
            let path = classesPath.appending(name)
            guard let classTable = reader.table(table, name, at: classesPath,
                                                expected: "`\(name)` must be a table like [\(path)]") else { continue }
            classes.append(readClass(name, classTable, at: path, reader))
        }
        return classes
    }

    private static func readClass(_ name: String, _ table: TOMLTable, at path: TOMLKeyPath,
                                  _ reader: TOMLReader) -> ClassSettings {
        reader.checkKeys(table, at: path, allowed: classKeys, in: "[\(path)]")
        var settings = ClassSettings(name: name, location: reader.map.tableLocation(path))
        func at(_ key: String) -> SourceLocation { reader.map.valueLocation(path.appending(key)) }

        settings.kindWritten = table["kind"] != nil
        if let kind = reader.string(table, "kind", at: path) {
            if let known = InterruptionKind(rawValue: kind) {
                settings.kind = Written(known, at: at("kind"))
            } else {
                let kinds = InterruptionKind.allCases.map(\.rawValue)
                let hint = closest(to: kind, in: kinds).map { " (did you mean \"\($0)\"?)" } ?? ""
                reader.fail(at("kind"), "unknown kind \"\(kind)\"\(hint); kinds: \(kinds.joined(separator: ", "))")
            }
        }

        let abovePath = path.appending("above")
        if let array = reader.array(table, "above", at: path, expected: "`above` must be an array of class names") {
            var above: [Written<String>] = []
            for (index, element) in array.enumerated() {
                if let other = element.string {
                    above.append(Written(other, at: reader.map.valueLocation(abovePath.appending(index))))
                } else {
                    reader.fail(reader.map.valueLocation(abovePath.appending(index)),
                                "`above` must list class names (strings), got \(TOMLReader.typeName(element))")
                }
            }
            settings.above = Written(above, at: reader.map.keyLocation(abovePath))
        }

        settings.grace = reader.duration(table, "grace", at: path).map { Written($0, at: at("grace")) }
        settings.duck = reader.level(table, "duck", at: path).map { Written($0, at: at("duck")) }
        settings.duckRamp = reader.duration(table, "duck-ramp", at: path).map { Written($0, at: at("duck-ramp")) }
        settings.restoreRamp = reader.duration(table, "restore-ramp", at: path)
            .map { Written($0, at: at("restore-ramp")) }
        settings.hold = reader.duration(table, "hold", at: path).map { Written($0, at: at("hold")) }
        if table["release-after"]?.string == "never" {
            settings.releaseAfter = Written(nil, at: at("release-after"))
        } else if let releaseAfter = reader.duration(table, "release-after", at: path) {
            settings.releaseAfter = Written(releaseAfter, at: at("release-after"))
        }
        settings.onOutputLoss = (readChoice("on-output-loss", in: table, at: path, reader) as OutputLossAction?)
            .map { Written($0, at: at("on-output-loss")) }
        settings.unfocused = (readChoice("unfocused", in: table, at: path, reader) as UnfocusedAction?)
            .map { Written($0, at: at("unfocused")) }
        settings.unfocusedDuck = reader.level(table, "unfocused-duck", at: path)
            .map { Written($0, at: at("unfocused-duck")) }
        settings.closedWindow = (readChoice("closed-window", in: table, at: path, reader) as ClosedWindowAction?)
            .map { Written($0, at: at("closed-window")) }
        return settings
    }
}

// MARK: - Defaults, outputs, drop-in

extension PolicyLayer {
    private static func readDefaults(_ root: TOMLTable, _ reader: TOMLReader) -> DefaultsSettings {
        let path: TOMLKeyPath = ["defaults"]
        var defaults = DefaultsSettings()
        defaults.location = reader.map.tableLocation(path)
        defaults.present = root["defaults"] != nil
        guard let table = reader.table(root, "defaults", at: .root, expected: "`defaults` must be a table") else {
            return defaults
        }
        defaults.isTable = true
        reader.checkKeys(table, at: path, allowed: defaultsKeys, in: "[defaults]")
        defaults.muteFade = reader.written(reader.duration(table, "mute-fade", at: path), "mute-fade", at: path)
        defaults.pauseTimeout = reader.written(reader.duration(table, "pause-timeout", at: path), "pause-timeout", at: path)
        defaults.classWritten = table["class"] != nil
        defaults.defaultClass = reader.written(reader.string(table, "class", at: path), "class", at: path)
        return defaults
    }

    /// `[outputs]`: `switch-window` (a duration) and `resume-when-back` (a duration, or `"never"`).
    private static func readOutputs(_ root: TOMLTable, _ reader: TOMLReader) -> OutputsSettings {
        let path: TOMLKeyPath = ["outputs"]
        var outputs = OutputsSettings()
        guard let table = reader.section(root, "outputs", allowed: outputsKeys) else { return outputs }
        outputs.switchWindow = reader.written(reader.duration(table, "switch-window", at: path), "switch-window", at: path)
        let resumePath = path.appending("resume-when-back")
        if table["resume-when-back"]?.string == "never" {
            outputs.resumeWhenBack = Written(nil, at: reader.map.valueLocation(resumePath))
        } else if let after = reader.duration(table, "resume-when-back", at: path) {
            outputs.resumeWhenBack = Written(after, at: reader.map.valueLocation(resumePath))
        }
        return outputs
    }

    /// `[audibility]`: `heard-above` and `silent-below` (levels down to −100 dB), `silence-after` (a
    /// duration above 0, at most ``AudibilityThresholds/longestSilenceAfter``).
    private static func readAudibility(_ root: TOMLTable, _ reader: TOMLReader) -> AudibilitySettings {
        let path: TOMLKeyPath = ["audibility"]
        var audibility = AudibilitySettings()
        guard let table = reader.section(root, "audibility", allowed: audibilityKeys) else { return audibility }
        let lowest = AudibilityThresholds.lowestDecibels
        audibility.heardAbove = reader.written(reader.level(table, "heard-above", at: path, lowest: lowest),
                                               "heard-above", at: path)
        audibility.silentBelow = reader.written(reader.level(table, "silent-below", at: path, lowest: lowest),
                                                "silent-below", at: path)
        let longest = AudibilityThresholds.longestSilenceAfter
        if let after = reader.duration(table, "silence-after", at: path) {
            if after > 0, after <= longest {
                audibility.silenceAfter = Written(after, at: reader.map.valueLocation(path.appending("silence-after")))
            } else {
                reader.fail(reader.map.valueLocation(path.appending("silence-after")),
                            "`silence-after` must be above 0 and at most \(longest) ms, got \(after) ms")
            }
        }
        return audibility
    }

    /// `[drop-in]`: marks the file as a drop-in; `disable-rules` names rules of earlier files to turn off.
    private static func readDropIn(_ root: TOMLTable, _ reader: TOMLReader) -> [Written<String>] {
        let path: TOMLKeyPath = ["drop-in"]
        guard let table = reader.table(root, "drop-in", at: .root,
                                       expected: "`drop-in` must be a table, written [drop-in]") else { return [] }
        reader.checkKeys(table, at: path, allowed: dropInKeys, in: "[drop-in]")
        let namesPath = path.appending("disable-rules")
        guard let array = reader.array(table, "disable-rules", at: path,
                                       expected: "`disable-rules` must be an array of rule names") else { return [] }
        var names: [Written<String>] = []
        for (index, element) in array.enumerated() {
            let location = reader.map.valueLocation(namesPath.appending(index))
            if let name = element.string {
                names.append(Written(name, at: location))
            } else {
                reader.fail(location, "`disable-rules` must list rule names (strings), got \(TOMLReader.typeName(element))")
            }
        }
        return names
    }
}

// MARK: - Rules

extension PolicyLayer {
    private static func readRules(_ root: TOMLTable, _ reader: TOMLReader) -> [RuleDraft] {
        let rulesPath: TOMLKeyPath = ["rule"]
        guard let array = reader.array(root, "rule", at: .root,
                                       expected: "`rule` must be an array of tables, written [[rule]]") else { return [] }
        var rules: [RuleDraft] = []
        for (index, element) in array.enumerated() {
            let path = rulesPath.appending(index)
            guard let table = element.table else {
                reader.fail(reader.map.valueLocation(path),
                            "each rule must be a table, written [[rule]], got \(TOMLReader.typeName(element))")
                continue
            }
            rules.append(readRule(table, at: path, reader))
        }
        return rules
    }

    private static func readRule(_ table: TOMLTable, at path: TOMLKeyPath, _ reader: TOMLReader) -> RuleDraft {
        reader.checkKeys(table, at: path, allowed: ruleKeys, in: "[[rule]]")
        let location = reader.map.tableLocation(path)
        var rule = RuleDraft(name: reader.string(table, "name", at: path), matchers: nil, className: nil,
                             spoken: reader.bool(table, "spoken", at: path) ?? false,
                             unfocused: readChoice("unfocused", in: table, at: path, reader),
                             closedWindow: readChoice("closed-window", in: table, at: path, reader), location: location)
        if table["match"] == nil {
            reader.fail(location, "rule has no `match`")
        } else if let match = reader.table(table, "match", at: path,
                                           expected: "`match` must be a table like { \"media.role\" = \"music\" }") {
            rule.matchers = readMatchers(match, at: path.appending("match"), reader)
        }
        if table["class"] == nil {
            reader.fail(location, "rule has no `class`")
        } else if let written = reader.string(table, "class", at: path) {
            rule.className = Written(written, at: reader.map.valueLocation(path.appending("class")))
        }
        return rule
    }

    /// A key whose value is one of `Choice`'s cases (`unfocused`, `closed-window`, `on-output-loss`); nil
    /// when absent or wrong (reported at the value, with the closest case and the list of them).
    private static func readChoice<Choice: RawRepresentable & CaseIterable>(
        _ key: String, in table: TOMLTable, at path: TOMLKeyPath, _ reader: TOMLReader
    ) -> Choice? where Choice.RawValue == String {
        guard let written = reader.string(table, key, at: path) else { return nil }
        if let known = Choice(rawValue: written) { return known }
        let choices = Choice.allCases.map(\.rawValue)
        let hint = closest(to: written, in: choices).map { " (did you mean \"\($0)\"?)" } ?? ""
        reader.fail(reader.map.valueLocation(path.appending(key)),
                    "unknown `\(key)` \"\(written)\"\(hint); one of: \(choices.joined(separator: ", "))")
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
