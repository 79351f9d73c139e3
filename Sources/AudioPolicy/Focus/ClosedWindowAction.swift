/// What happens to the Now Playing app's playback when its last window closes (`closed-window` in
/// `[class.NAME]` or a `[[rule]]`): visionOS pauses it, and people resume it from the system's controls
/// without opening the window again. Opt-in, because many Linux players (Rhythmbox, Spotify, Lollypop)
/// keep playing from a tray after their window closes, which is often what people want.
public enum ClosedWindowAction: String, Hashable, Sendable, CaseIterable {
    /// Paused through its player, for good (the user's kind of pause: never resumed by the daemon); it
    /// stays Now Playing, so the play key resumes it.
    case pause
    /// Plays on (the default everywhere).
    case nothing
}
