import AudioPolicy
import AudioPolicyDaemon
import ControlProtocol
import Testing

/// `doctor`'s checks on made-up sessions: each fires on the session it is about and stays quiet on the
/// same session without the fault.
@Suite struct DiagnosisTests {
    /// A session where everything is fine: a server, a running daemon, a display, mpv with its plugin.
    static let fine = SessionFacts(
        serverAnswers: true, modules: ["module-native-protocol-unix", "module-null-sink"], processes: ["pulseaudio"],
        daemon: status([]), socket: "/run/user/1000/audio-policyd/control", mpvInstalled: true, mpvMPRISInstalled: true,
        display: ":0")

    static func status(_ streams: [StatusReport.Stream]) -> StatusReport {
        StatusReport(nowPlaying: nil, streams: streams, policy: "<embedded default>", server: "pulseaudio 16.1", decisions: [])
    }

    static func stream(_ index: UInt32, _ application: String, class: String = "primary", player: String? = nil,
                       appID: String? = nil) -> StatusReport.Stream {
        var row = StatusReport.Stream(index: index, application: application, class: `class`, state: .playing, factor: 1,
                                      muted: false, spoken: false, rule: "r", hook: nil)
        row.player = player
        row.appID = appID
        return row
    }

    static func checks(_ facts: SessionFacts) -> [String] { Diagnosis.findings(facts).map(\.check) }

    @Test("a fine session has no findings and exit status 0")
    func fineSession() {
        #expect(Diagnosis.findings(Self.fine).isEmpty)
        #expect(Finding.exitStatus(Diagnosis.findings(Self.fine)) == 0)
    }

    @Test("PulseAudio's role-cork and role-ducking are reported with their unload commands")
    func roleModules() {
        var facts = Self.fine
        facts.modules = (facts.modules ?? []) + ["module-role-cork", "module-role-ducking"]
        let found = Diagnosis.findings(facts)
        #expect(found.map(\.check) == ["role-cork", "role-ducking"])
        #expect(found[0].fix.hasPrefix("pactl unload-module module-role-cork"))
        #expect(Finding.exitStatus(found) == 1)
    }

    @Test("pactl missing: modules unchecked, exit status 2 when nothing else is wrong")
    func noPactl() {
        var facts = Self.fine
        facts.serverAnswers = nil
        facts.modules = nil
        #expect(Self.checks(facts) == ["pactl"])
        #expect(Finding.exitStatus(Diagnosis.findings(facts)) == 2)
    }

    @Test("playerctld running is reported; the daemon not answering is reported")
    func processesAndDaemon() {
        var facts = Self.fine
        facts.processes.insert("playerctld")
        facts.daemon = nil
        #expect(Self.checks(facts) == ["playerctld", "daemon"])
    }

    @Test("media streams with no player are reported (faded, not paused); mpv's get the mpv-mpris fix; players and non-media are not")
    func streamsWithoutPlayers() {
        var facts = Self.fine
        facts.daemon = Self.status([
            Self.stream(1, "Firefox"), Self.stream(2, "mpv"), Self.stream(3, "Spotify", player: "org.mpris.MediaPlayer2.spotify"),
            Self.stream(4, "Mutter", class: "notification"), Self.stream(5, "mpv", player: "org.mpris.MediaPlayer2.mpv", appID: "io.mpv.Mpv"),
        ])
        let found = Diagnosis.findings(facts)
        #expect(found.map(\.check) == ["mpv-mpris", "no-player"])
        #expect(found[0].problem.contains("stream 2") && found[0].fix == "sudo apt install mpv-mpris")
        #expect(found[1].problem.hasPrefix("Firefox (stream 1)"))
        facts.mpvMPRISInstalled = false
        facts.daemon = Self.status([])
        #expect(Self.checks(facts) == ["mpv-mpris"])
        facts.mpvInstalled = false
        #expect(Self.checks(facts).isEmpty)
    }

    @Test("no DISPLAY and no sway socket is a note (exit status stays 0); a sway socket alone is a focus source")
    func focus() {
        var facts = Self.fine
        facts.display = nil
        let found = Diagnosis.findings(facts)
        #expect(found.map(\.check) == ["focus"] && found[0].severity == .note)
        #expect(Finding.exitStatus(found) == 0)
        facts.swaySocket = "/run/user/1000/sway-ipc.1000.42.sock"
        #expect(Self.checks(facts).isEmpty)
    }

    @Test("KDE or GNOME on Wayland: DISPLAY (Xwayland's) is no focus source; the KWin script or the GNOME extension enabled is, and sway's socket is")
    func waylandFocusHelpers() throws {
        var facts = Self.fine
        facts.waylandDisplay = "wayland-0"
        for (desktop, fix) in [("KDE", "kwriteconfig5 --file kwinrc --group Plugins --key audio-policyd-focusEnabled true"),
                               ("ubuntu:GNOME", "gnome-extensions enable audio-policyd-focus@audio-policyd")] {
            facts.currentDesktop = desktop
            facts.focusExtensionEnabled = false
            let found = Diagnosis.findings(facts)
            #expect(found.map(\.check) == ["focus"] && found.first?.severity == .note, "\(desktop)")
            #expect(found.first?.fix.contains(fix) == true, "\(desktop): \(found)")
            #expect(Finding.exitStatus(found) == 0)
            facts.focusExtensionEnabled = nil
            #expect(Self.checks(facts) == ["focus"], "\(desktop), not known to be enabled")
            // Controls: the helper enabled, or sway's socket, is a source.
            facts.focusExtensionEnabled = true
            #expect(Self.checks(facts).isEmpty, "\(desktop), enabled")
            facts.focusExtensionEnabled = false
            facts.swaySocket = "/run/user/1000/sway-ipc.1000.42.sock"
            #expect(Self.checks(facts).isEmpty, "\(desktop) with a sway socket")
            facts.swaySocket = nil
        }
        // Another Wayland desktop: Xwayland's DISPLAY is no source either; the focus op is the way in.
        facts.currentDesktop = "Hyprland"
        #expect(Diagnosis.findings(facts).first?.fix.contains(#"{"op":"focus""#) == true)
        // Control: X11 with no Wayland is a source.
        facts.waylandDisplay = nil
        #expect(Self.checks(facts).isEmpty)
    }

    @Test("kwinrc and GNOME's enabled-extensions setting are read for the helpers")
    func helperSettings() {
        #expect(ShellFocusExtension.kwinrcEnables("[Plugins]\nfoo=true\naudio-policyd-focusEnabled=true\n"))
        #expect(!ShellFocusExtension.kwinrcEnables("[Plugins]\naudio-policyd-focusEnabled=false\n"))
        #expect(!ShellFocusExtension.kwinrcEnables("[Other]\naudio-policyd-focusEnabled=true\n"))
        #expect(ShellFocusExtension.gnomeSettingEnables("['ding@rastersoft.com', 'audio-policyd-focus@audio-policyd']"))
        #expect(!ShellFocusExtension.gnomeSettingEnables("@as []"))
        #expect(ShellFocusExtension(currentDesktop: "KDE") == .kwinScript)
        #expect(ShellFocusExtension(currentDesktop: "ubuntu:GNOME") == .gnomeExtension)
        #expect(ShellFocusExtension(currentDesktop: "sway") == nil)
    }

    @Test("no server answering: the ALSA plugin must be configured (type audiopolicy, not commented out)")
    func alsa() {
        var facts = Self.fine
        facts.serverAnswers = false
        facts.modules = nil
        #expect(Self.checks(facts) == ["alsa-plugin"])
        facts.alsaConfigs = ["pcm.!default {\n  # type audiopolicy\n  type hw\n}"]
        #expect(Self.checks(facts) == ["alsa-plugin"])
        facts.alsaConfigs = ["pcm.!default {\n    type audiopolicy\n    slave.pcm \"hw:0\"\n}"]
        #expect(Self.checks(facts).isEmpty)
        // Control: with a server answering, the plugin is not needed.
        facts.alsaConfigs = []
        facts.serverAnswers = true
        #expect(Self.checks(facts).isEmpty)
    }

    @Test("WirePlumber 0.4's role endpoints count only when uncommented; 0.5's role loopbacks when required")
    func wirePlumber() {
        let shipped = "-- uncomment to enable role-based endpoints\n--[[\n\ndefault_policy.policy.roles = {\n}\n]]--\n"
        #expect(!WirePlumberConfig.luaEnablesRoles(shipped))
        #expect(WirePlumberConfig.luaEnablesRoles("default_policy.policy.roles = {\n  [\"Capture\"] = {},\n}\n"))
        #expect(!WirePlumberConfig.luaEnablesRoles("-- default_policy.policy.roles = {}\n"))
        #expect(WirePlumberConfig.confEnablesRoles("wireplumber.profiles = {\n  main = {\n    policy.linking.role-based.loopbacks = required\n  }\n}\n"))
        #expect(!WirePlumberConfig.confEnablesRoles("# policy.linking.role-based.loopbacks = required\n"))
        var facts = Self.fine
        facts.wirePlumberRolePolicy = "/etc/wireplumber/policy.lua.d/50-endpoints-config.lua"
        #expect(Self.checks(facts) == ["wireplumber-roles"])
    }
}
