/// The piece a Wayland desktop needs before the daemon can follow focus there, for `doctor`: KDE
/// Plasma's KWin script and GNOME Shell's extension (desktop/, installed by `make install`).
///
/// On those sessions no focus source of the daemon's own sees Wayland windows (`DISPLAY` is
/// Xwayland's and shows X11 windows only; there is no sway socket), so the shell itself has to tell
/// the daemon; `doctor` says which piece is missing and how to turn it on.
public enum ShellFocusExtension: String, Sendable {
    case kwinScript
    case gnomeExtension

    public static let kwinScriptName = "audio-policyd-focus"
    public static let gnomeExtensionUUID = "audio-policyd-focus@audio-policyd"

    /// The extension for `XDG_CURRENT_DESKTOP` (a colon-separated list: `KDE`, `ubuntu:GNOME`); nil for
    /// other desktops.
    public init?(currentDesktop: String?) {
        let names = (currentDesktop ?? "").split(separator: ":").map { $0.uppercased() }
        if names.contains("KDE") {
            self = .kwinScript
        } else if names.contains("GNOME") {
            self = .gnomeExtension
        } else {
            return nil
        }
    }

    var desktop: String { self == .kwinScript ? "KDE Plasma" : "GNOME" }

    var name: String {
        self == .kwinScript ? "KWin script \(Self.kwinScriptName)" : "GNOME Shell extension \(Self.gnomeExtensionUUID)"
    }

    var fix: String {
        switch self {
        case .kwinScript:
            "make install (it installs the script), then: kwriteconfig5 --file kwinrc --group Plugins --key "
                + "\(Self.kwinScriptName)Enabled true && qdbus org.kde.KWin /KWin reconfigure "
                + "(Plasma 6: kwriteconfig6, qdbus6), or tick it in System Settings › Window Management › KWin Scripts"
        case .gnomeExtension:
            "make install (it installs the extension), log out and in, then: gnome-extensions enable \(Self.gnomeExtensionUUID)"
        }
    }

    /// Whether a `kwinrc` turns the script on (`[Plugins]`, `audio-policyd-focusEnabled=true`).
    public static func kwinrcEnables(_ text: String) -> Bool {
        var section = ""
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = String(raw.filter { $0 != " " && $0 != "\t" })
            if line.hasPrefix("[") {
                section = line
            } else if section == "[Plugins]", line == "\(kwinScriptName)Enabled=true" {
                return true
            }
        }
        return false
    }

    /// Whether `gsettings get org.gnome.shell enabled-extensions` lists the extension.
    public static func gnomeSettingEnables(_ text: String) -> Bool {
        text.contains("'\(gnomeExtensionUUID)'")
    }
}
