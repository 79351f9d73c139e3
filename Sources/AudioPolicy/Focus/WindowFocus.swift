/// What the engine knows of the desktop's focus: which app's window has it, and which apps have been seen
/// with a window at all.
///
/// Only an app seen with a window can be "unfocused": a background music player or a CLI has no window
/// to look away from. X11 reports only the active window, so an app counts as having a window once its
/// window has had focus (a new window is given focus when it opens, so that is soon).
struct WindowFocus: Hashable, Sendable {
    /// False until a focus source speaks, and again after it went away: then focus decides nothing.
    var known = false
    /// The app whose window has focus; nil when none has (the desktop, or the focused window closed).
    var focused: AppIdentity?
    /// Apps seen with a window, least recently focused first; bounded, as pids are reused.
    private(set) var windowed: [AppIdentity] = []

    static let memory = 256

    /// A window of `app` has focus (nil: none has).
    mutating func focus(_ app: AppIdentity?) {
        known = true
        focused = app
        guard let app else { return }
        windowed.removeAll { $0 == app }
        windowed.append(app)
        if windowed.count > Self.memory { windowed.removeFirst(windowed.count - Self.memory) }
    }

    /// A window of `app` closed: if it had focus, nothing has now (focus lost, not given elsewhere yet).
    mutating func windowClosed(_ app: AppIdentity) {
        guard known else { return }
        if focused == app { focused = nil }
        if !windowed.contains(app) { windowed.append(app) }
    }

    /// The focus source went away: nothing is unfocused any more, until a source speaks again.
    mutating func forget() {
        known = false
        focused = nil
    }
}
