/// What an MPRIS player (`org.mpris.MediaPlayer2.*`) has told us about itself.
public struct MPRISPlayer: Hashable, Sendable {
    /// `PlaybackStatus`.
    public enum Status: String, Hashable, Sendable, Codable {
        case playing = "Playing"
        case paused = "Paused"
        case stopped = "Stopped"
    }

    /// The well-known name, e.g. `org.mpris.MediaPlayer2.mpv`.
    public var busName: String
    /// The unique name that owns it (`:1.42`): signals come from it.
    public var owner: String
    /// The process behind the connection (`GetConnectionUnixProcessID`), once known.
    public var pid: Int32?
    /// The Flatpak app id or Snap name of that process (for a sandboxed player, of its D-Bus proxy), if we may look.
    public var appID: String?
    public var identity: String?
    public var desktopEntry: String?
    public var status: Status?
    public var canPause = true
    public var canPlay = true
    public var canGoNext = false
    public var canGoPrevious = false
    public var canSeek = false
    public var canControl = true
    /// `Metadata` (`a{sv}`), as sent.
    public var metadata: [String: BusValue] = [:]

    public init(busName: String, owner: String) {
        self.busName = busName
        self.owner = owner
    }

    /// `org.mpris.MediaPlayer2.mpv.instance42` → `mpv.instance42`: what playerctl calls it.
    public var shortName: String {
        busName.hasPrefix(MPRIS.namePrefix) ? String(busName.dropFirst(MPRIS.namePrefix.count)) : busName
    }

    public var isPlaying: Bool { status == .playing }
    public var title: String? { metadata["xesam:title"]?.string }
    public var artist: String? { metadata["xesam:artist"]?.strings?.joined(separator: ", ") }
    public var album: String? { metadata["xesam:album"]?.string }

    /// Applies properties from `GetAll` or `PropertiesChanged` (either interface); returns whether
    /// anything changed.
    @discardableResult
    public mutating func apply(_ properties: [String: BusValue]) -> Bool {
        let before = self
        for (key, value) in properties {
            switch key {
            case "PlaybackStatus": status = value.string.flatMap(Status.init(rawValue:))
            case "CanPause": canPause = value.bool ?? canPause
            case "CanPlay": canPlay = value.bool ?? canPlay
            case "CanGoNext": canGoNext = value.bool ?? canGoNext
            case "CanGoPrevious": canGoPrevious = value.bool ?? canGoPrevious
            case "CanSeek": canSeek = value.bool ?? canSeek
            case "CanControl": canControl = value.bool ?? canControl
            case "Metadata": metadata = value.stringDictionary ?? [:]
            case "Identity": identity = value.string
            case "DesktopEntry": desktopEntry = value.string
            default: break
            }
        }
        return self != before
    }
}

/// Names of the MPRIS D-Bus API.
public enum MPRIS {
    public static let namePrefix = "org.mpris.MediaPlayer2."
    public static let path = "/org/mpris/MediaPlayer2"
    public static let rootInterface = "org.mpris.MediaPlayer2"
    public static let playerInterface = "org.mpris.MediaPlayer2.Player"
    public static let propertiesInterface = "org.freedesktop.DBus.Properties"
    /// Our own player's name in the MPRIS namespace (``NowPlayingName/mpris``): `playerctl -p audiopolicy`
    /// reaches the Now Playing owner through it.
    public static let ownName = "org.mpris.MediaPlayer2.audiopolicy"

    /// Whether a name is a proxy that mirrors other players (playerctld, our own Now Playing player):
    /// it plays no stream, and following it would loop when it follows us (playerctld follows every
    /// name but its own).
    public static func isProxy(_ busName: String) -> Bool {
        busName == NowPlayingName.ownBusName || busName == ownName || busName.hasPrefix(ownName + ".") || busName.hasPrefix(namePrefix + "playerctld")
    }
}
