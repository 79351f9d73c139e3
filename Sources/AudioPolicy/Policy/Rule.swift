/// One `[[rule]]` of a policy: when all its matchers match a stream's properties, the stream gets its class.
public struct Rule: Hashable, Sendable {
    /// Optional name shown by `explain` and in logs.
    public var name: String?
    /// All must match (AND); each matcher accepts any of its patterns (OR).
    public var matchers: [PropertyMatcher]
    public var className: String
    /// `spoken = true`: paused and resumed instead of ducked, because ducked speech is unintelligible.
    public var spoken: Bool
    /// `unfocused`: what its streams do while none of their app's windows has focus, over the class's
    /// (a rule for one game, say, in a class that otherwise plays on); nil: the class says.
    public var unfocused: UnfocusedAction?
    /// `closed-window`: what its streams do when their app is Now Playing and its last window closes,
    /// over the class's; nil: the class says.
    public var closedWindow: ClosedWindowAction?
    public var location: SourceLocation?

    public init(name: String? = nil, matchers: [PropertyMatcher], className: String, spoken: Bool = false,
                unfocused: UnfocusedAction? = nil, closedWindow: ClosedWindowAction? = nil,
                location: SourceLocation? = nil) {
        self.name = name
        self.matchers = matchers
        self.className = className
        self.spoken = spoken
        self.unfocused = unfocused
        self.closedWindow = closedWindow
        self.location = location
    }

    public func matches(_ properties: Properties) -> Bool {
        matches(properties, appValues: PropertyMatcher.appValues(of: properties))
    }

    /// The same, with the values of the `app` pseudo-property's keys looked up once for every rule.
    func matches(_ properties: Properties, appValues: [String]) -> Bool {
        matchers.allSatisfy { $0.matches(properties, appValues: appValues) }
    }

    /// The pseudo-key that is `"yes"` for a microphone capture and `"no"` for a playback stream.
    public static let captureKey = "capture"

    /// Whether the rule classifies microphone captures: only a rule that names `capture` in its match
    /// does, so that no rule written for playback (an app's, `app = "*"`) makes a recording interrupt.
    public var namesCapture: Bool { matchers.contains { $0.key == Self.captureKey } }

    /// The fingerprint that made the rule match: for each matcher, the property and the pattern it
    /// matched (nil when the rule does not match). `explain` shows it.
    public func fingerprint(of properties: Properties) -> [PropertyMatcher.Match]? {
        var found: [PropertyMatcher.Match] = []
        for matcher in matchers {
            guard let match = matcher.match(properties) else { return nil }
            found.append(match)
        }
        return found
    }
}

/// Matches one property (or the `app` pseudo-property) against glob patterns, case-insensitively.
public struct PropertyMatcher: Hashable, Sendable {
    /// Property keys the pseudo-key `app` stands for: any of them may match.
    public static let appKeys = [
        "application.name", "application.process.binary", "application.id",
        "pipewire.access.portal.app_id", "application.flatpak.id", "pipewire.client.app_id",
    ]

    public var key: String
    public var patterns: [Glob]

    public init(key: String, patterns: [Glob]) {
        self.key = key
        self.patterns = patterns
    }

    /// Whether a property it names matches one of its patterns (what ``match(_:)`` finds, without
    /// building the answer: this runs for every rule on every new stream).
    public func matches(_ properties: Properties) -> Bool {
        matches(properties, appValues: key == "app" ? Self.appValues(of: properties) : [])
    }

    /// The same, with `appValues` the values of ``appKeys`` in `properties` (``appValues(of:)``).
    func matches(_ properties: Properties, appValues: [String]) -> Bool {
        guard key == "app" else { return properties[key].map(matchesValue) ?? false }
        return appValues.contains(where: matchesValue)
    }

    /// The values a stream's properties give the `app` pseudo-property, in the order of ``appKeys``.
    static func appValues(of properties: Properties) -> [String] {
        appKeys.compactMap { properties[$0] }
    }

    private func matchesValue(_ value: String) -> Bool {
        patterns.contains { $0.matches(value) }
    }

    /// Which property (for `app`, which of its keys) matched which pattern.
    public struct Match: Hashable, Sendable, CustomStringConvertible {
        public var key: String
        public var value: String
        public var pattern: String
        public var description: String { "\(key) = \"\(value)\" (pattern \"\(pattern)\")" }
    }

    public func match(_ properties: Properties) -> Match? {
        let keys = key == "app" ? Self.appKeys : [key]
        for key in keys {
            guard let value = properties[key] else { continue }
            if let pattern = patterns.first(where: { $0.matches(value) }) {
                return Match(key: key, value: value, pattern: pattern.pattern)
            }
        }
        return nil
    }
}
