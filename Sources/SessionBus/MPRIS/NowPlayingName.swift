/// Where our Now Playing player is published on the session bus, and so which desktops see it.
///
/// GNOME Shell shows a media card for every `org.mpris.MediaPlayer2.*` name (KDE a tab, swaync an entry),
/// keyed by bus name with no de-duplication: a player that mirrors the real one is a second, identical
/// card, and playerctld follows it like any player. Outside that namespace no shell shows it and no
/// MPRIS client follows it, while media keys still reach the owner through it (`dbus-send`, or
/// `audio-policyd now-playing --send`); the desktops' own key handlers pick the one player that is
/// Playing, which is the owner once the daemon has paused the others. So that is the default;
/// `mpris` is for setups that drive players with `playerctl -p` alone and hide duplicates themselves.
public enum NowPlayingName: String, CaseIterable, Sendable {
    /// `org.audiopolicyd.NowPlaying`: no card anywhere; keys through our CLI or D-Bus.
    case own
    /// `org.mpris.MediaPlayer2.audiopolicy`: `playerctl -p audiopolicy`; a second card in GNOME Shell.
    case mpris
    /// Not published at all.
    case none

    /// The bus name asked for, nil for ``none``.
    public var busName: String? {
        switch self {
        case .own: Self.ownBusName
        case .mpris: MPRIS.ownName
        case .none: nil
        }
    }

    public static let ownBusName = "org.audiopolicyd.NowPlaying"
}
