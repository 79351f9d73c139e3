import ControlProtocol

/// What `doctor` read of the session: gathered by the command, judged by ``Diagnosis`` (pure, so each
/// check is tested on made-up sessions).
public struct SessionFacts: Sendable {
    /// Whether a sound server answered (`pactl info`); nil when pactl is not installed.
    public var serverAnswers: Bool?
    /// `pactl list modules short`'s module names; nil when they could not be listed.
    public var modules: [String]?
    /// The WirePlumber config file that turns its role policy on, if one does; nil when WirePlumber is
    /// not running or none does.
    public var wirePlumberRolePolicy: String?
    /// Command names of the processes running (`/proc/PID/comm`).
    public var processes: Set<String>
    /// The running daemon's `status`; nil when it did not answer on its control socket.
    public var daemon: StatusReport?
    /// The control socket asked.
    public var socket: String
    /// Whether mpv is installed, and mpv-mpris where mpv loads it from.
    public var mpvInstalled: Bool
    public var mpvMPRISInstalled: Bool
    /// `DISPLAY`, `SWAYSOCK`/`I3SOCK`, `WAYLAND_DISPLAY` as set.
    public var display: String?
    public var swaySocket: String?
    public var waylandDisplay: String?
    /// `XDG_CURRENT_DESKTOP` (`KDE`, `ubuntu:GNOME`…).
    public var currentDesktop: String?
    /// Whether that desktop's ``ShellFocusExtension`` is turned on (kwinrc, GNOME's enabled-extensions);
    /// nil when it could not be read or the desktop has none.
    public var focusExtensionEnabled: Bool?
    /// The text of `~/.asoundrc` and `/etc/asound.conf` (those that exist).
    public var alsaConfigs: [String]
    /// The files of the policy `run` would load now, in the order merged (the base, then its drop-ins).
    public var policyFiles: [String]
    /// Their errors, `FILE:LINE:COLUMN: message` each: none when the policy loads.
    public var policyErrors: [String]

    public init(serverAnswers: Bool?, modules: [String]?, wirePlumberRolePolicy: String? = nil,
                processes: Set<String> = [], daemon: StatusReport?, socket: String, mpvInstalled: Bool = false,
                mpvMPRISInstalled: Bool = false, display: String? = nil, swaySocket: String? = nil,
                waylandDisplay: String? = nil, currentDesktop: String? = nil, focusExtensionEnabled: Bool? = nil,
                alsaConfigs: [String] = [], policyFiles: [String] = [], policyErrors: [String] = []) {
        self.serverAnswers = serverAnswers
        self.modules = modules
        self.wirePlumberRolePolicy = wirePlumberRolePolicy
        self.processes = processes
        self.daemon = daemon
        self.socket = socket
        self.mpvInstalled = mpvInstalled
        self.mpvMPRISInstalled = mpvMPRISInstalled
        self.display = display
        self.swaySocket = swaySocket
        self.waylandDisplay = waylandDisplay
        self.currentDesktop = currentDesktop
        self.focusExtensionEnabled = focusExtensionEnabled
        self.alsaConfigs = alsaConfigs
        self.policyFiles = policyFiles
        self.policyErrors = policyErrors
    }
}
