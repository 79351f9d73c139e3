/// What happens to an app's streams while none of its windows has focus (`unfocused` in `[class.NAME]` or
/// a `[[rule]]`): games and ambient sound that go on behind the window you look at are what people ask
/// to quieten ("mute in background"); media you chose to listen to is not.
public enum UnfocusedAction: String, Hashable, Sendable, CaseIterable {
    /// Ducked to the class's `unfocused-duck` level over its `duck-ramp`, back over its `restore-ramp`.
    case duck
    /// Faded to silence (its volume, not its mute switch, so a mute of the user's own stays theirs).
    case mute
    /// Plays on as if focus did not exist (the default everywhere).
    case nothing
}
