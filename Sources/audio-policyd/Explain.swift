import ArgumentParser
import AudioPolicy
import AudioPolicyDaemon
import FoundationEssentials
import FoundationGaps
import Glibc

/// `audio-policyd explain -p KEY=VALUE ...`: what the policy does with a stream of these properties.
struct Explain: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the class a stream with the given properties gets, and why.",
        discussion: """
            Example: audio-policyd explain -p media.role=Navigation -p application.name=Maps
            The pseudo-key `app` of a rule matches application.name, application.process.binary and the app ids.
            -p capture=yes explains a recording from a microphone: only rules that name `capture` classify one.
            Policy: --policy FILE alone, else the policy in force with its drop-ins, as `run` loads it; \
            `set in` names the file (and line) each class setting in force was written in, `rule` the \
            rule's. --rules lists the files and the rules in force, in the order they are tried.
            """
    )

    @Option(help: ArgumentHelp("Policy file alone (default: the policy in force, drop-ins included).",
                               valueName: "file"))
    var policy: String?

    @Flag(help: "List the policy's files and its rules, in the order they are tried, each with its file and line.")
    var rules = false

    @Option(name: [.customShort("p"), .long],
            help: ArgumentHelp("A stream property, such as media.role=music. Repeatable.", valueName: "key=value"))
    var property: [String] = []

    @Flag(help: "Print a JSON object instead of text.")
    var json = false

    func validate() throws {
        for assignment in property {
            guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                throw ValidationError("--property must be KEY=VALUE, got \"\(assignment)\"")
            }
        }
    }

    func run() throws {
        let policy: Policy
        do {
            policy = try PolicyFile.load(PolicyFile.inForce(explicit: self.policy))
        } catch {
            printErrors(error)
            throw ExitCode.failure
        }
        if rules {
            print(RuleListing(policy: policy).text)
            return
        }
        let properties = properties
        guard properties[Rule.captureKey] != "yes" || policy.classifyCapture(properties) != nil else {
            // A recording no rule names acts on nobody: there is no default class to show.
            print(json ? "{\n  \"capture\" : true,\n  \"class\" : null\n}"
                : "class:          none: no rule for captures (`capture` in `match`) matches; the recording acts on nobody")
            return
        }
        let explanation = Explanation(policy: policy, properties: properties)
        print(json ? try explanation.json() : explanation.text)
    }

    private var properties: Properties {
        var properties: Properties = [:]
        for assignment in property {
            guard let equals = assignment.firstIndex(of: "=") else { continue }
            properties[String(assignment[..<equals])] = String(assignment[assignment.index(after: equals)...])
        }
        return properties
    }
}

// MARK: - Explanation

/// What `explain` shows: the classification of one stream and how its class stands to the others.
struct Explanation: Encodable {
    var className: String
    var kind: InterruptionKind
    var priority: Int
    var duck: Level
    var grace: Milliseconds?
    var spoken: Bool
    var rule: Rule?
    var reason: String
    /// What matched: each of the rule's keys, the value it found and the pattern that took it.
    var fingerprint: [PropertyMatcher.Match]
    var releaseAfter: Milliseconds?
    var interrupts: [String]
    var interruptedBy: [String]
    /// What it does while none of its app's windows has focus: the rule's `unfocused`, else the class's.
    var unfocused: UnfocusedAction
    /// Whose `unfocused` that is: `rule` or `class`.
    var unfocusedFrom: String
    var unfocusedDuck: Level
    /// What it does when its app is Now Playing and its last window closes: the rule's `closed-window`,
    /// else the class's.
    var closedWindow: ClosedWindowAction
    /// Whose `closed-window` that is: `rule` or `class`.
    var closedWindowFrom: String
    /// Where each class setting in force was written (`duck` → `FILE:LINE:COLUMN`); keys no file wrote
    /// are at their defaults.
    var settings: [String: SourceLocation]
    /// Every file of the policy, in the order merged.
    var files: [String]
    /// A recording from a microphone (`capture = yes`): it interrupts while it records, not while heard.
    var capture: Bool

    init(policy: Policy, properties: Properties) {
        capture = properties[Rule.captureKey] == "yes"
        let classification = capture ? policy.classifyCapture(properties) ?? policy.classify(properties)
            : policy.classify(properties)
        let cls = classification.interruptionClass
        className = cls.name
        kind = cls.kind
        priority = cls.rank
        duck = cls.duck
        grace = cls.kind == .primary ? cls.grace : nil
        spoken = classification.spoken
        rule = classification.rule
        reason = classification.reason
        fingerprint = classification.rule?.fingerprint(of: properties) ?? []
        releaseAfter = cls.releaseAfter
        unfocused = classification.rule?.unfocused ?? cls.unfocused
        unfocusedFrom = classification.rule?.unfocused == nil ? "class" : "rule"
        unfocusedDuck = cls.unfocusedDuck
        closedWindow = classification.rule?.closedWindow ?? cls.closedWindow
        closedWindowFrom = classification.rule?.closedWindow == nil ? "class" : "rule"
        settings = cls.origins
        files = policy.files
        // Highest priority first, as the stack would stand.
        let others = policy.classes.values.sorted { ($1.rank, $0.name) < ($0.rank, $1.name) }
        interrupts = others.filter { policy.interrupts(cls, $0) }.map(\.name)
        interruptedBy = others.filter { policy.interrupts($0, cls) }.map(\.name)
    }

    var text: String {
        func list(_ names: [String]) -> String {
            names.isEmpty ? "nothing" : names.map { $0 == className ? "\($0) (another app's)" : $0 }
                .joined(separator: ", ")
        }
        var lines = [
            ("class", className),
            ("kind", kind.rawValue),
            ("priority", "\(priority)"),
        ]
        // How it ducks and when silence releases it say nothing of a class that interrupts nobody.
        if !interrupts.isEmpty {
            lines.append(("duck", String(printf: "%.1f dB (linear %.3f)", duck.decibels, duck.linear)))
        }
        if let grace { lines.append(("grace", "\(grace) ms of sound")) }
        if capture {
            lines.append(("while", "it records and its app plays nothing (a recording is not measured)"))
        } else if !interrupts.isEmpty {
            lines.append(("release after", releaseAfter.map { "\($0) ms of silence" } ?? "never (silence does not end it)"))
        }
        lines += [
            ("spoken", spoken ? "yes: paused and resumed instead of ducked" : "no"),
            ("rule", reason),
            ("because", fingerprint.isEmpty ? "no rule matched: the default class"
                : fingerprint.map(\.description).joined(separator: ", ")),
            ("interrupts", list(interrupts)),
            ("interrupted by", list(interruptedBy)),
            ("unfocused", unfocusedText),
            ("closed window", closedWindowText),
            ("set in", settingsText),
        ]
        return lines.map { ($0.0 + ":").padded(to: 16) + $0.1 }
            .joined(separator: "\n")
    }

    /// `policies/car.toml (duck:29, duck-ramp:30), <embedded default> (kind:56)`: the file, and line,
    /// of each class setting in force, files in the order merged (the last one written wins).
    private var settingsText: String {
        guard !settings.isEmpty else { return "nothing: every setting of the class is at its default" }
        let byFile = Dictionary(grouping: settings, by: { $0.value.file })
        return files.reversed().compactMap { file -> String? in
            guard let keys = byFile[file] else { return nil }
            let written = keys.sorted { ($0.value.line, $0.key) < ($1.value.line, $1.key) }
                .map { "\($0.key):\($0.value.line)" }
            return "\(file) (\(written.joined(separator: ", ")))"
        }.joined(separator: ", ")
    }

    /// `duck to -12.0 dB (class)`: what focus does to it, and whose setting that is.
    private var unfocusedText: String {
        let what = switch unfocused {
        case .duck: String(printf: "duck to %.1f dB", unfocusedDuck.decibels)
        case .mute: "mute"
        case .nothing: "nothing"
        }
        return what + " when none of its app's windows has focus (\(unfocusedFrom))"
    }

    /// `pause when it is Now Playing and its app's last window closes (class)`.
    private var closedWindowText: String {
        let what = closedWindow == .pause ? "pause" : "nothing"
        return what + " when it is Now Playing and its app's last window closes (\(closedWindowFrom))"
    }

    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    private enum Key: String, CodingKey {
        case className = "class", kind, priority, duck, grace, spoken, rule, interrupts, interruptedBy
        case decibels = "dB", linear, name, file, line, matched, key, value, pattern, releaseAfter
        case unfocused, unfocusedDuck, from, settings, files, column, capture, closedWindow
    }

    func encode(to encoder: Encoder) throws {
        var object = encoder.container(keyedBy: Key.self)
        try object.encode(className, forKey: .className)
        try object.encode(kind, forKey: .kind)
        try object.encode(priority, forKey: .priority)
        var duckObject = object.nestedContainer(keyedBy: Key.self, forKey: .duck)
        try duckObject.encode((duck.decibels * 100).rounded() / 100, forKey: .decibels)
        try duckObject.encode((duck.linear * 10000).rounded() / 10000, forKey: .linear)
        try object.encode(grace, forKey: .grace)
        try object.encode(capture ? nil : releaseAfter, forKey: .releaseAfter)
        if capture { try object.encode(true, forKey: .capture) }
        try object.encode(spoken, forKey: .spoken)
        if let rule {
            var ruleObject = object.nestedContainer(keyedBy: Key.self, forKey: .rule)
            try ruleObject.encode(rule.name, forKey: .name)
            try ruleObject.encode(rule.location?.file, forKey: .file)
            try ruleObject.encode(rule.location?.line, forKey: .line)
            var matched = ruleObject.nestedUnkeyedContainer(forKey: .matched)
            for match in fingerprint {
                var entry = matched.nestedContainer(keyedBy: Key.self)
                try entry.encode(match.key, forKey: .key)
                try entry.encode(match.value, forKey: .value)
                try entry.encode(match.pattern, forKey: .pattern)
            }
        } else {
            try object.encodeNil(forKey: .rule)
        }
        try object.encode(interrupts, forKey: .interrupts)
        try object.encode(interruptedBy, forKey: .interruptedBy)
        var unfocusedObject = object.nestedContainer(keyedBy: Key.self, forKey: .unfocused)
        try unfocusedObject.encode(unfocused.rawValue, forKey: .kind)
        try unfocusedObject.encode(unfocusedFrom, forKey: .from)
        try unfocusedObject.encode((unfocusedDuck.decibels * 100).rounded() / 100, forKey: .decibels)
        var closedWindowObject = object.nestedContainer(keyedBy: Key.self, forKey: .closedWindow)
        try closedWindowObject.encode(closedWindow.rawValue, forKey: .kind)
        try closedWindowObject.encode(closedWindowFrom, forKey: .from)
        var settingsObject = object.nestedContainer(keyedBy: SettingKey.self, forKey: .settings)
        for (key, location) in settings.sorted(by: { $0.key < $1.key }) {
            var entry = settingsObject.nestedContainer(keyedBy: Key.self, forKey: SettingKey(key))
            try entry.encode(location.file, forKey: .file)
            try entry.encode(location.line, forKey: .line)
            try entry.encode(location.column, forKey: .column)
        }
        try object.encode(files, forKey: .files)
    }

    /// A class setting's name as a JSON key (`duck-ramp`).
    private struct SettingKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ key: String) { stringValue = key }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

// MARK: - Rules listing

/// What `explain --rules` shows: the files of the policy, then every rule in the order tried, with the
/// class it gives and where it is written (a drop-in's before the files under it).
struct RuleListing {
    var policy: Policy

    var text: String {
        var lines = ["files: " + policy.files.joined(separator: ", "), "rules, first match wins:"]
        for (index, rule) in policy.rules.enumerated() {
            let name = rule.name.map { "\"\($0)\"" } ?? "(unnamed)"
            let at = rule.location.map { "\($0.file):\($0.line)" } ?? "-"
            lines.append("\(String(index + 1).padded(to: 4))\(name) → \(rule.className) (\(at))")
        }
        lines.append("no rule matches: \(policy.defaultClass)")
        return lines.joined(separator: "\n")
    }
}
