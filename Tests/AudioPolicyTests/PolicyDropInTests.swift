import Testing
@testable import AudioPolicy

/// The embedded default with `dropIns` laid over it, in order, each named `dN.toml` (N from 1).
func merged(_ dropIns: [String]) throws(LocatedErrors) -> Policy {
    try PolicyLoader.load([PolicyText(text: Policy.embeddedDefaultText, file: Policy.embeddedDefaultSource, role: .policy)]
        + dropIns.enumerated().map { PolicyText(text: $0.element, file: "d\($0.offset + 1).toml", role: .dropIn) })
}

/// The errors merging `dropIns` over the default gives, as `FILE:LINE:COLUMN: message` lines.
func errors(_ dropIns: [String]) -> [String] {
    do {
        _ = try merged(dropIns)
        return []
    } catch {
        return error.errors.map(\.description)
    }
}

/// One class setting in words, so one table can compare levels, kinds, actions and ranks.
private func setting(_ policy: Policy, _ className: String, _ key: String) -> String {
    guard let cls = policy.classes[className] else { return "absent" }
    switch key {
    case "kind": return cls.kind.rawValue
    case "duck": return "\((cls.duck.decibels * 10).rounded() / 10) dB"
    case "duck-ramp": return "\(cls.duckRamp)"
    case "hold": return "\(cls.hold)"
    case "unfocused": return cls.unfocused.rawValue
    case "closed-window": return cls.closedWindow.rawValue
    case "on-output-loss": return cls.onOutputLoss.rawValue
    case "outranks": return cls.outranks.sorted().joined(separator: ",")
    case "release-after": return cls.releaseAfter.map(String.init) ?? "never"
    default: return "?"
    }
}



/// How drop-ins merge: key by key for classes (one key changed, the rest as the default wrote them),
/// new classes, rule order (later files first), `disable-rules`, and every error in its own file.
/// Each case has its control: the same question asked of the default alone (or of the good file).
@Suite("Policy drop-ins")
struct PolicyDropInTests {
    struct ClassCase: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var dropIns: [String]
        var className: String
        var key: String
        /// With the drop-ins, and (the control) the default alone.
        var merged: String
        var alone: String
    }

    static let classCases: [ClassCase] = [
        ClassCase(testDescription: "one key of a class changes", dropIns: ["[class.ambient]\nunfocused = \"duck\"\n"],
                  className: "ambient", key: "unfocused", merged: "duck", alone: "nothing"),
        ClassCase(testDescription: "the class's other keys stay the default's",
                  dropIns: ["[class.ambient]\nunfocused = \"duck\"\n"],
                  className: "ambient", key: "on-output-loss", merged: "mute", alone: "mute"),
        ClassCase(testDescription: "closed-window on media", dropIns: ["[class.primary]\nclosed-window = \"pause\"\n"],
                  className: "primary", key: "closed-window", merged: "pause", alone: "nothing"),
        ClassCase(testDescription: "a later drop-in takes closed-window back",
                  dropIns: ["[class.primary]\nclosed-window = \"pause\"\n", "[class.primary]\nclosed-window = \"nothing\"\n"],
                  className: "primary", key: "closed-window", merged: "nothing", alone: "nothing"),
        ClassCase(testDescription: "a level", dropIns: ["[class.navigation]\nduck = \"-30 dB\"\n"],
                  className: "navigation", key: "duck", merged: "-30.0 dB", alone: "-20.0 dB"),
        ClassCase(testDescription: "its neighbour keys stay", dropIns: ["[class.navigation]\nduck = \"-30 dB\"\n"],
                  className: "navigation", key: "duck-ramp", merged: "300", alone: "300"),
        ClassCase(testDescription: "a later drop-in wins the same key",
                  dropIns: ["[class.navigation]\nduck = \"-30 dB\"\nhold = 900\n", "[class.navigation]\nduck = \"-25 dB\"\n"],
                  className: "navigation", key: "duck", merged: "-25.0 dB", alone: "-20.0 dB"),
        ClassCase(testDescription: "an earlier drop-in's other key stays",
                  dropIns: ["[class.navigation]\nduck = \"-30 dB\"\nhold = 900\n", "[class.navigation]\nduck = \"-25 dB\"\n"],
                  className: "navigation", key: "hold", merged: "900", alone: "500"),
        ClassCase(testDescription: "a new class", dropIns: ["[class.voice-chat]\nkind = \"short\"\nabove = [\"primary\"]\n"],
                  className: "voice-chat", key: "kind", merged: "short", alone: "absent"),
        ClassCase(testDescription: "`above` is one key: replaced whole", dropIns: ["[class.navigation]\nabove = [\"primary\"]\n"],
                  className: "navigation", key: "outranks", merged: "primary", alone: "ambient,primary"),
        ClassCase(testDescription: "kind defaults follow the merged kind",
                  dropIns: ["[class.ambient]\nkind = \"short\"\n"],
                  className: "ambient", key: "release-after", merged: "1000", alone: "never"),
        ClassCase(testDescription: "a drop-in may name a class a later drop-in adds",
                  dropIns: ["[class.navigation]\nabove = [\"primary\", \"radio\"]\n", "[class.radio]\nkind = \"short\"\n"],
                  className: "navigation", key: "outranks", merged: "primary,radio", alone: "ambient,primary"),
    ]

    @Test(arguments: classCases)
    func classKeys(_ c: ClassCase) throws {
        #expect(setting(try merged(c.dropIns), c.className, c.key) == c.merged)
        #expect(setting(Policy.embeddedDefault, c.className, c.key) == c.alone)
    }

    @Test func settingsSayWhichFileWroteThem() throws {
        let policy = try merged(["# games\n[class.ambient]\nunfocused = \"duck\"\n"])
        let ambient = try #require(policy.classes["ambient"])
        #expect(ambient.origins["unfocused"] == SourceLocation(file: "d1.toml", line: 3, column: 13))
        #expect(ambient.origins["on-output-loss"]?.file == Policy.embeddedDefaultSource)
        #expect(ambient.location?.file == Policy.embeddedDefaultSource)
        #expect(policy.files == [Policy.embeddedDefaultSource, "d1.toml"])
        #expect(policy.source == Policy.embeddedDefaultSource)
        // Control: the default alone wrote every setting of its own.
        #expect(Policy.embeddedDefault.classes["ambient"]?.origins["unfocused"] == nil)
    }

    struct RuleCase: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var dropIns: [String]
        var properties: Properties
        /// The class and rule with the drop-ins, then (the control) with the default alone.
        var merged: (String, String?)
        var alone: (String, String?)
    }

    static let ruleCases: [RuleCase] = [
        RuleCase(testDescription: "a drop-in's rule is tried before the default's",
                 dropIns: ["[[rule]]\nname = \"music mixes\"\nmatch = { \"media.role\" = \"music\" }\nclass = \"ambient\"\n"],
                 properties: ["media.role": "music"], merged: ("ambient", "music mixes"), alone: ("primary", "media roles")),
        RuleCase(testDescription: "a later drop-in's rule is tried before an earlier one's",
                 dropIns: ["[[rule]]\nname = \"first\"\nmatch = { app = \"tux\" }\nclass = \"primary\"\n",
                           "[[rule]]\nname = \"second\"\nmatch = { app = \"tux\" }\nclass = \"mix\"\n"],
                 properties: ["application.name": "tux"], merged: ("mix", "second"), alone: ("ambient", nil)),
        RuleCase(testDescription: "the earlier drop-in's rule, alone",
                 dropIns: ["[[rule]]\nname = \"first\"\nmatch = { app = \"tux\" }\nclass = \"primary\"\n"],
                 properties: ["application.name": "tux"], merged: ("primary", "first"), alone: ("ambient", nil)),
        RuleCase(testDescription: "within a file, rules keep their order",
                 dropIns: ["[[rule]]\nname = \"a\"\nmatch = { app = \"tux\" }\nclass = \"primary\"\n"
                           + "[[rule]]\nname = \"b\"\nmatch = { app = \"tux\" }\nclass = \"mix\"\n"],
                 properties: ["application.name": "tux"], merged: ("primary", "a"), alone: ("ambient", nil)),
        RuleCase(testDescription: "a rule disabled by name no longer matches",
                 dropIns: ["[drop-in]\ndisable-rules = [\"media roles\"]\n"],
                 properties: ["media.role": "music"], merged: ("ambient", nil), alone: ("primary", "media roles")),
        RuleCase(testDescription: "a later drop-in disables an earlier drop-in's rule",
                 dropIns: ["[[rule]]\nname = \"tux pauses music\"\nmatch = { app = \"tux\" }\nclass = \"primary\"\n",
                           "[drop-in]\ndisable-rules = [\"tux pauses music\"]\n"],
                 properties: ["application.name": "tux"], merged: ("ambient", nil), alone: ("ambient", nil)),
        RuleCase(testDescription: "a drop-in may disable a rule and add its own of the same name",
                 dropIns: ["[drop-in]\ndisable-rules = [\"calls\"]\n[[rule]]\nname = \"calls\"\n"
                           + "match = { \"media.role\" = \"phone\" }\nclass = \"notification\"\n"],
                 properties: ["media.role": "phone"], merged: ("notification", "calls"), alone: ("call", "calls")),
    ]

    @Test(arguments: ruleCases)
    func rules(_ c: RuleCase) throws {
        let policy = try merged(c.dropIns)
        let got = policy.classify(c.properties)
        #expect(got.interruptionClass.name == c.merged.0)
        #expect(got.rule?.name == c.merged.1)
        let control = Policy.embeddedDefault.classify(c.properties)
        #expect(control.interruptionClass.name == c.alone.0)
        #expect(control.rule?.name == c.alone.1)
    }

    @Test func ruleOrderAcrossFiles() throws {
        let policy = try merged(["[[rule]]\nname = \"one\"\nmatch = { app = \"a\" }\nclass = \"mix\"\n",
                                 "[[rule]]\nname = \"two\"\nmatch = { app = \"b\" }\nclass = \"mix\"\n"
                                 + "[[rule]]\nname = \"three\"\nmatch = { app = \"c\" }\nclass = \"mix\"\n"])
        #expect(policy.rules.prefix(3).map(\.name) == ["two", "three", "one"])
        #expect(policy.rules.count == Policy.embeddedDefault.rules.count + 3)
        #expect(policy.rules.dropFirst(3).map(\.name) == Policy.embeddedDefault.rules.map(\.name))
        #expect(policy.rules[0].location == SourceLocation(file: "d2.toml", line: 1, column: 1))
    }

    @Test func disablingTakesEveryRuleOfThatName() throws {
        let policy = try merged(["[drop-in]\ndisable-rules = [\"calls\", \"media roles\"]\n"])
        #expect(!policy.rules.contains { $0.name == "calls" || $0.name == "media roles" })
        #expect(policy.rules.count == Policy.embeddedDefault.rules.count - 2)
    }

    struct ErrorCase: Sendable, CustomTestStringConvertible {
        var testDescription: String
        var dropIns: [String]
        var errors: [String]
        /// The control: the same drop-ins with the mistake fixed load.
        var fixed: [String]
    }

    static let errorCases: [ErrorCase] = [
        ErrorCase(testDescription: "an unknown rule name to disable, at its place",
                  dropIns: ["[drop-in]\ndisable-rules = [\"calls\", \"media rolez\"]\n"],
                  errors: ["d1.toml:2:27: no rule named \"media rolez\" to disable (did you mean \"media roles\"?) in the files before this one; `audio-policyd explain --rules` lists the rules in force"],
                  fixed: ["[drop-in]\ndisable-rules = [\"calls\", \"media roles\"]\n"]),
        ErrorCase(testDescription: "a rule of a later file cannot be disabled",
                  dropIns: ["[drop-in]\ndisable-rules = [\"mine\"]\n",
                            "[[rule]]\nname = \"mine\"\nmatch = { app = \"x\" }\nclass = \"mix\"\n"],
                  errors: ["d1.toml:2:18: no rule named \"mine\" to disable in the files before this one; `audio-policyd explain --rules` lists the rules in force"],
                  fixed: ["[[rule]]\nname = \"mine\"\nmatch = { app = \"x\" }\nclass = \"mix\"\n",
                          "[drop-in]\ndisable-rules = [\"mine\"]\n"]),
        ErrorCase(testDescription: "an error in the second drop-in is in that file",
                  dropIns: ["[class.navigation]\nduck = \"-30 dB\"\n", "# two\n[class.navigation]\nhold = \"long\"\n"],
                  errors: ["d2.toml:3:8: `hold` must be a duration in ms (integer) or a string like \"1.5s\", got \"long\""],
                  fixed: ["[class.navigation]\nduck = \"-30 dB\"\n", "# two\n[class.navigation]\nhold = \"1s\"\n"]),
        ErrorCase(testDescription: "errors in two files, each in its own, in file order",
                  dropIns: ["[class.ambient]\nunfocused = \"dim\"\n", "[[rule]]\nmatch = { app = \"x\" }\nclass = \"radio\"\n"],
                  errors: ["d1.toml:2:13: unknown `unfocused` \"dim\"; one of: duck, mute, nothing",
                           "d2.toml:3:9: unknown class \"radio\"; defined classes: ambient, call, mix, navigation, notification, primary, short, speech"],
                  fixed: ["[class.ambient]\nunfocused = \"duck\"\n", "[[rule]]\nmatch = { app = \"x\" }\nclass = \"mix\"\n"]),
        ErrorCase(testDescription: "a new class with no kind, at its header",
                  dropIns: ["\n[class.radio]\nabove = [\"primary\"]\n"],
                  errors: ["d1.toml:2:1: class \"radio\" needs a `kind`: primary, call, short, ambient or mix"],
                  fixed: ["\n[class.radio]\nkind = \"short\"\nabove = [\"primary\"]\n"]),
        ErrorCase(testDescription: "a cycle a drop-in closes is blamed on the drop-in",
                  dropIns: ["[class.navigation]\nabove = [\"call\"]\n"],
                  errors: ["d1.toml:2:1: priority cycle: call > navigation > call"],
                  fixed: ["[class.navigation]\nabove = [\"primary\"]\n"]),
        ErrorCase(testDescription: "a syntax error in one drop-in, a key error in another",
                  dropIns: ["[class.ambient\n", "[class.ambient]\nduckk = 1\n"],
                  errors: ["d1.toml:1:15: syntax error in table header: expected ']', saw '\\n'",
                           "d2.toml:2:1: unknown key `duckk` in [class.ambient] (did you mean `duck`?); allowed keys: kind, above, grace, duck, duck-ramp, restore-ramp, hold, release-after, on-output-loss, unfocused, unfocused-duck, closed-window"],
                  fixed: ["[class.ambient]\n", "[class.ambient]\nduck = 1\n"]),
    ]

    @Test(arguments: errorCases)
    func located(_ c: ErrorCase) {
        #expect(errors(c.dropIns) == c.errors)
        #expect(errors(c.fixed) == [])
    }

    @Test func aDropInNamedAloneIsLaidOverTheDefault() throws {
        let text = "[drop-in]\n[class.ambient]\nunfocused = \"duck\"\n"
        let policy = try PolicyLoader.load(text: text, file: "games.toml")
        #expect(policy.source == "games.toml")
        #expect(policy.files == [Policy.embeddedDefaultSource, "games.toml"])
        #expect(policy.classes["ambient"]?.unfocused == .duck)
        #expect(policy.rules.count == Policy.embeddedDefault.rules.count)
        // Control: without `[drop-in]` the same text is a whole policy, with no primary class.
        #expect(throws: LocatedErrors.self) { try PolicyLoader.load(text: "[class.ambient]\nunfocused = \"duck\"\n", file: "games.toml") }
    }

    @Test func theDropInTableIsChecked() {
        #expect(errors(["[drop-in]\ndisable = [\"calls\"]\n"])
            == ["d1.toml:2:1: unknown key `disable` in [drop-in]; allowed keys: disable-rules"])
        #expect(errors(["[drop-in]\ndisable-rules = [\"calls\", 3]\n"])
            == ["d1.toml:2:27: `disable-rules` must list rule names (strings), got integer"])
        #expect(errors(["drop-in = 1\n"]) == ["d1.toml:1:11: `drop-in` must be a table, written [drop-in], got integer"])
        #expect(errors(["[drop-in]\ndisable-rules = [\"calls\"]\n"]) == [])
    }
}
