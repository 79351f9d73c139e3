/// A live session written down as a fixture: what the engine was told, and what it did.
///
/// `audio-policyd record` feeds it the daemon's event lines — `input` (each event the engine was
/// given), `stream` (a stream's state and where its factor is heading) and `now-playing` — with their
/// times on the daemon's clock, and ``text(description:policy:)`` writes a fixture that
/// `audio-policyd test` replays: the inputs as `[[event]]` tables, the daemon's doings as `[[expect]]`.
///
/// Why the expectations are trustworthy: they come from what the daemon published, not from a replay,
/// so a replay against another policy (or a changed engine) shows the differences as failures.
/// - A stream's state is expected at the time it was published (after the inputs of that millisecond).
/// - Its factor is expected where its ramp settles, if nothing about that stream happened before then
///   (a later state, an end, the user's volume or mute) and the recording lasted that long.
/// - Now Playing is expected each time it changed.
///
/// Titles (`media.name`, song and tab titles) and personal identifiers (user, host, machine id) are
/// left out of properties unless `withTitles`, so that a recording can go into a bug report.
public struct FixtureRecording: Sendable {
    /// The property keys dropped unless titles are wanted.
    public static let privateKeys: Set<String> = [
        "media.name", "media.title", "media.artist", "media.album", "media.filename", "media.copyright",
        "media.icon_name", "event.description", "window.name", "window.title",
        "application.process.user", "application.process.host", "application.process.machine_id",
        "application.process.session_id",
    ]

    private enum Item: Sendable {
        case input(FixtureEvent)
        case state(stream: String, state: StreamState, muted: Bool)
        case factor(stream: String, value: Double)
        case nowPlaying(String?)
    }

    /// Every step with its time on the daemon's clock; fixture time 0 is the earliest of them.
    private var items: [(at: Int, item: Item)] = []
    /// The latest time seen (daemon clock).
    private var latest = Int.min
    private let withTitles: Bool
    /// Streams the recording saw start (expectations are only written for them).
    private var known: Set<String> = []
    private var lastOwner: String??

    public init(withTitles: Bool = false) {
        self.withTitles = withTitles
    }

    /// How many events were recorded.
    public var eventCount: Int { items.filter { if case .input = $0.item { true } else { false } }.count }

    /// What the engine was told at `at` (daemon clock, ms).
    public mutating func input(_ event: FixtureEvent, at: Int) {
        var event = event
        if !withTitles, let properties = event.properties {
            event.properties = properties.filter { !Self.privateKeys.contains($0.key) }
        }
        if ["start", "interrupt", "claim"].contains(event.verb) { known.insert(event.id) }
        latest = max(latest, at)
        items.append((at, .input(event)))
    }

    /// A stream's published state: `target` and `settles` (daemon clock) say where its factor is heading.
    public mutating func stream(_ id: String, state: StreamState, muted: Bool, target: Double?, settles: Int?, at: Int) {
        latest = max(latest, at)
        guard known.contains(id), state != .ended else { return }
        items.append((at, .state(stream: id, state: state, muted: muted)))
        if let target, let settles {
            items.append((max(at, settles), .factor(stream: id, value: target)))
        }
    }

    /// The Now Playing owner (the engine's id; nil for nobody) changed at `at`.
    public mutating func nowPlaying(_ id: String?, at: Int) {
        latest = max(latest, at)
        guard lastOwner != .some(id) else { return }
        lastOwner = .some(id)
        if let id, !known.contains(id) { return }
        items.append((at, .nowPlaying(id)))
    }

    /// The fixture: a `description`, the `policy` (a path) if given, then every step in time order.
    public func text(description: String, policy: String? = nil) -> String {
        var lines = ["description = \(FixtureEvent.quote(description))"]
        if let policy { lines.append("policy = \(FixtureEvent.quote(policy))") }
        // Every Paused the players said is in the recording, and a player that ignored Pause must stay so.
        lines.append("players-obey-pause = false")
        lines.append("# Written by `audio-policyd record`: [[event]]s are what the daemon's engine was told, "
                     + "[[expect]]s what it did.")
        let origin = items.map(\.at).min() ?? 0
        let steps = items.enumerated().filter { isKept($0.offset) }.map(\.element)
            .enumerated().sorted { ($0.element.at, $0.offset) < ($1.element.at, $1.offset) }.map(\.element)
        for (time, item) in steps {
            let at = time - origin
            lines.append("")
            switch item {
            case let .input(event):
                lines += ["[[event]]", "at = \(at)"] + event.tomlLines
            case let .state(id, state, muted):
                lines += ["[[expect]]", "at = \(at)", "stream = \(FixtureEvent.quote(id))",
                          "state = \(FixtureEvent.quote(state.rawValue))", "muted = \(muted)"]
            case let .factor(id, value):
                lines += ["[[expect]]", "at = \(at)", "stream = \(FixtureEvent.quote(id))",
                          "volume = \(Self.format(value))"]
            case let .nowPlaying(id):
                lines += ["[[expect]]", "at = \(at)", "now-playing = \(FixtureEvent.quote(id ?? ""))"]
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A factor expectation is kept only if nothing about its stream happened between the decision that
    /// set the ramp and the ramp's end, and the recording reached that end.
    private func isKept(_ position: Int) -> Bool {
        guard case let .factor(id, _) = items[position].item else { return true }
        let settles = items[position].at
        guard settles <= latest else { return false }
        // The decision is the state item just before it; look at what came after.
        for (at, item) in items[(position + 1)...] where at <= settles {
            switch item {
            case let .state(other, _, _) where other == id: return false
            case let .input(event) where event.id == id && ["end", "volume", "mute", "playing", "paused"].contains(event.verb):
                return false
            default: continue
            }
        }
        return true
    }

    private static func format(_ value: Double) -> String {
        let rounded = (value * 10_000).rounded() / 10_000
        return "\(rounded)"
    }
}
