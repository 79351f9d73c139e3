/// What a media player says of itself: its MPRIS `PlaybackStatus`, and whether it names what it plays.
///
/// A player makes its app's sounds media only while it says it plays media. A browser keeps its page's
/// player on the bus after the page's song has ended (Chromium's `chromium.instanceN`, Stopped), and
/// every later sound of that browser — a web game in another tab, a meeting's ring — would otherwise
/// count as media through it and pause the user's music for good.
public enum PlayerStatus: String, Hashable, Sendable, CaseIterable {
    /// `Playing`, with metadata: it plays something it names.
    case playing
    /// `Paused`.
    case paused
    /// `Stopped`.
    case stopped
    /// It says nothing it plays: no `PlaybackStatus`, or `Playing` with no metadata.
    case quiet
}
