/// Focus: an app whose windows are all unfocused is ducked (or muted) when its class or rule says so
/// (`unfocused`), unless it is the Now Playing app or in a call. Apple's guidance: audio of an app the
/// person looked away from may duck; the playback they chose (Now Playing) goes on, and a call is never
/// lowered because they glanced at another window.
///
/// The engine keeps only what the focus source said (``WindowFocus``); which streams are unfocused is
/// worked out anew at each reconcile, so a stream that starts after its window lost focus is ducked as it
/// starts, and a focus that named no stream yet takes effect once the app plays.
extension Engine {
    mutating func focusChanged(_ event: Event) {
        switch event {
        case let .focus(app): windowFocus.focus(app)
        case let .windowClosed(app): windowFocus.windowClosed(app)
        case .focusUnknown: windowFocus.forget()
        default: break
        }
    }

    /// The apps (``TrackedStream/app``) whose windows are all unfocused and that focus may act on: seen
    /// with a window, none of which has focus, not Now Playing, not in a call or recording. Empty while
    /// focus is unknown or no class or rule acts on it, so the daemon behaves as without focus then.
    func unfocusedApps() -> Set<String> {
        guard windowFocus.known, policy.actsOnFocus, !windowFocus.windowed.isEmpty else { return [] }
        let live = streams.values.filter { $0.isLive && !$0.isHook }
        var windowed = Set<String>()
        for identity in windowFocus.windowed { windowed.formUnion(apps(of: identity, among: live)) }
        guard !windowed.isEmpty else { return [] }
        var unfocused = windowed.subtracting(windowFocus.focused.map { apps(of: $0, among: live) } ?? [])
        if let owner = nowPlaying.ownerApp { unfocused.remove(owner) }
        for stream in live where stream.interruptionClass.kind == .call { unfocused.remove(stream.app) }
        for capture in captures.values { unfocused.remove(capture.app) }
        return unfocused
    }

    /// The apps a focus source's identity stands for: those with a stream of its process, else those with
    /// a stream of its name (see ``AppIdentity``).
    func apps(of identity: AppIdentity, among live: [TrackedStream]) -> Set<String> {
        let byProcess = Set(live.filter { identity.hasProcess(of: $0.properties) }.map(\.app))
        if !byProcess.isEmpty { return byProcess }
        // By name only streams of processes never seen with a window of their own: a second mpv's window
        // is not the window of the mpv that plays the game (it was seen with its own).
        let windowedPIDs = Set(windowFocus.windowed.compactMap { $0.pid.map(String.init) })
        return Set(live.filter {
            identity.isNamed(in: $0.properties)
                && !windowedPIDs.contains($0.properties["application.process.id"] ?? "")
        }.map(\.app))
    }

    /// What focus asks of a stream of an unfocused app: its rule's `unfocused`, else its class's.
    func unfocusedEffect(on stream: TrackedStream) -> (Effect, reason: String)? {
        let cls = stream.interruptionClass
        let ruled = stream.classification.rule?.unfocused
        let action = ruled ?? cls.unfocused
        let source = ruled == nil ? "class \(cls.name)" : "its rule"
        switch action {
        case .nothing: return nil
        case .duck: return (.duck(cls.unfocusedDuck.linear), "no window of its app has focus (\(source): unfocused = duck)")
        case .mute: return (.duck(0), "no window of its app has focus (\(source): unfocused = mute)")
        }
    }
}
