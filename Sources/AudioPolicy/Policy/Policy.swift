/// A complete policy: the classes, the rules that classify streams into them, and global settings.
///
/// Build one with ``PolicyLoader`` from TOML (or use ``Policy/embeddedDefault``). Policies are values:
/// the engine swaps them atomically on reload.
public struct Policy: Hashable, Sendable {
    /// Where the policy came from (a path, or `<embedded default>`): the file named, or the base of
    /// the policy in force.
    public var source: String
    /// Every file the policy was merged from, in order, later ones over earlier ones: the base (the
    /// embedded default under a drop-in named alone), then its drop-ins. Just ``source`` without drop-ins.
    public var files: [String]
    public var classes: [String: InterruptionClass]
    /// Checked in order; the first rule that matches wins.
    public var rules: [Rule]
    /// Class of a stream no rule matches.
    public var defaultClass: String
    /// Fade before the mute fallback mutes a stream, and after it unmutes one, ms.
    public var muteFade: Milliseconds
    /// How long a player has to report Paused after the engine's Pause, ms; one still playing then
    /// ignored it, and the mute fallback silences the stream instead (some players, and apps that
    /// expose MPRIS only for show, never pause).
    public var pauseTimeout: Milliseconds
    /// `[outputs]`: the switch window and whether a device coming back resumes.
    public var outputs: OutputPolicy
    /// `[audibility]`: when a stream's peaks count as sound and when as silence.
    public var audibility: AudibilityThresholds

    public init(source: String, classes: [String: InterruptionClass], rules: [Rule], defaultClass: String,
                muteFade: Milliseconds = 500, pauseTimeout: Milliseconds = 1000,
                outputs: OutputPolicy = OutputPolicy(), audibility: AudibilityThresholds = AudibilityThresholds(),
                files: [String]? = nil) {
        self.source = source
        self.files = files ?? [source]
        self.classes = classes
        self.rules = rules
        self.defaultClass = defaultClass
        self.muteFade = muteFade
        self.pauseTimeout = pauseTimeout
        self.outputs = outputs
        self.audibility = audibility
    }

    /// The class, spoken flag and matching rule for a stream's properties. A rule that names `capture` in
    /// its match classifies a stream only if it matches the stream's `capture = "no"` (the engine adds it).
    public func classify(_ properties: Properties) -> Classification {
        let appValues = PropertyMatcher.appValues(of: properties)
        // The rules are lent through the array's buffer: a `for` over the array copies each rule out
        // (a retain and a release for each of its patterns), a tenth of a new stream's classification.
        let matched = rules.withUnsafeBufferPointer { rules in
            rules.firstIndex { rule in rule.matches(properties, appValues: appValues) && classes[rule.className] != nil }
        }
        if let matched, let cls = classes[rules[matched].className] {
            return Classification(interruptionClass: cls, spoken: rules[matched].spoken, rule: rules[matched])
        }
        return Classification(interruptionClass: defaultClassValue, spoken: false, rule: nil)
    }

    /// The class of a microphone capture with these properties (the pseudo-property `capture` is `yes`),
    /// or nil when no rule names captures that match. Only rules that name `capture` in their match
    /// classify captures, and the default class never applies: recording is what OBS and voice chat do
    /// with music playing on purpose, so a capture acts on nobody unless a rule says otherwise.
    public func classifyCapture(_ properties: Properties) -> Classification? {
        var properties = properties
        properties[Rule.captureKey] = "yes"
        let appValues = PropertyMatcher.appValues(of: properties)
        for rule in rules where rule.namesCapture && rule.matches(properties, appValues: appValues) {
            if let cls = classes[rule.className] {
                return Classification(interruptionClass: cls, spoken: rule.spoken, rule: rule)
            }
        }
        return nil
    }

    /// The class named `name`, falling back to the default class (validated policies always have both).
    public func interruptionClass(named name: String) -> InterruptionClass? { classes[name] }

    var defaultClassValue: InterruptionClass {
        classes[defaultClass] ?? InterruptionClass(name: defaultClass, kind: .primary)
    }

    /// Whether any class or rule acts on focus (`unfocused` other than `nothing`): if none does, focus is
    /// not worked out at all.
    public var actsOnFocus: Bool {
        classes.values.contains { $0.unfocused != .nothing } || rules.contains { ($0.unfocused ?? .nothing) != .nothing }
    }

    /// Whether a stream of class `interrupter` acts on a stream of class `target` (of another app).
    public func interrupts(_ interrupter: InterruptionClass, _ target: InterruptionClass) -> Bool {
        if interrupter.kind == .mix || interrupter.kind == .ambient || target.kind == .mix { return false }
        if interrupter.outranks.contains(target.name) { return true }
        // Another app's music replaces yours; a second call puts the first on hold. Shorts mix.
        return interrupter.name == target.name && (interrupter.kind == .primary || interrupter.kind == .call)
    }
}

/// The outcome of classifying one stream.
public struct Classification: Hashable, Sendable {
    public var interruptionClass: InterruptionClass
    public var spoken: Bool
    /// The rule that matched, or nil when the policy's default class applied.
    public var rule: Rule?

    public init(interruptionClass: InterruptionClass, spoken: Bool, rule: Rule?) {
        self.interruptionClass = interruptionClass
        self.spoken = spoken
        self.rule = rule
    }

    /// `file:line` of the rule, or `default` — for logs and `explain`.
    public var reason: String {
        guard let rule else { return "default class" }
        let at = rule.location.map { "\($0.file):\($0.line)" } ?? "rule"
        return rule.name.map { "rule \"\($0)\" (\(at))" } ?? "rule at \(at)"
    }
}
