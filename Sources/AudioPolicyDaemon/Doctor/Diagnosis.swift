import ControlProtocol

/// `audio-policyd doctor`'s judgement: what in a session will not behave, each with why and its fix.
///
/// Pure: the command gathers ``SessionFacts``; every check here is a function of them, so a check is
/// tested by the session it must fire on and the one it must not.
public enum Diagnosis {
    /// Every finding for `facts`, in a fixed order (sound server, players, desktop, daemon).
    public static func findings(_ facts: SessionFacts) -> [Finding] {
        roleModules(facts) + wirePlumber(facts) + playerctld(facts) + mpv(facts) + streamsWithoutPlayers(facts)
            + focus(facts) + alsa(facts) + policy(facts) + daemon(facts)
    }

    /// PulseAudio's own role policy acting beside ours: it corks or ducks the same streams again.
    static func roleModules(_ facts: SessionFacts) -> [Finding] {
        guard let modules = facts.modules else {
            guard facts.serverAnswers != nil else {
                return [Finding(check: "pactl", severity: .unchecked, problem: "pactl is not installed: the sound server's modules were not checked",
                                why: "doctor lists modules with `pactl list modules short`", fix: "sudo apt install pulseaudio-utils")]
            }
            return []
        }
        var found: [Finding] = []
        if modules.contains("module-role-cork") {
            found.append(Finding(
                check: "role-cork", problem: "PulseAudio's module-role-cork is loaded",
                why: "it mutes and corks media whenever a phone-role stream plays, beside the daemon's own decisions: music stays silent after a beep, or is paused twice",
                fix: "pactl unload-module module-role-cork; and comment out `load-module module-role-cork` in /etc/pulse/default.pa (or ~/.config/pulse/default.pa)"))
        }
        if modules.contains("module-role-ducking") {
            found.append(Finding(
                check: "role-ducking", problem: "PulseAudio's module-role-ducking is loaded",
                why: "it ducks streams by role (-20 dB, instantly) on top of the daemon's ducks: music ducks twice, and stays ducked by its rules",
                fix: "pactl unload-module module-role-ducking; and remove `load-module module-role-ducking` from /etc/pulse/default.pa (or ~/.config/pulse/default.pa)"))
        }
        return found
    }

    /// WirePlumber's role-based policy (endpoints in 0.4, role loopbacks in 0.5) turned on in its config.
    static func wirePlumber(_ facts: SessionFacts) -> [Finding] {
        guard let file = facts.wirePlumberRolePolicy else { return [] }
        return [Finding(
            check: "wireplumber-roles", problem: "WirePlumber's role-based policy is enabled (\(file))",
            why: "it ducks or corks streams by media.role itself, by unlinking them (apps are never told): the daemon's decisions are undone or doubled",
            fix: "comment out the role policy in \(file) again, then: systemctl --user restart wireplumber")]
    }

    /// playerctld: a proxy player that mirrors the others.
    static func playerctld(_ facts: SessionFacts) -> [Finding] {
        guard facts.processes.contains("playerctld") else { return [] }
        return [Finding(
            check: "playerctld", problem: "playerctld is running",
            why: "it is a second MPRIS name for the playing app: GNOME Shell and swaync show a duplicate media card (the daemon itself ignores it)",
            fix: "stop it (kill $(pidof playerctld), and drop it from your session's autostart), or have your bar ignore it (waybar: \"ignored-players\": [\"playerctld\"])")]
    }

    /// mpv without its MPRIS plugin: the daemon cannot pause it.
    static func mpv(_ facts: SessionFacts) -> [Finding] {
        let mpvStreams = facts.daemon?.streams.filter { $0.application.lowercased() == "mpv" && $0.player == nil } ?? []
        guard facts.mpvInstalled, !facts.mpvMPRISInstalled || !mpvStreams.isEmpty else { return [] }
        let streams = mpvStreams.compactMap(\.index).map { "stream \($0)" }
        return [Finding(
            check: "mpv-mpris", problem: streams.isEmpty ? "mpv is installed without mpv-mpris"
                : "mpv plays with no MPRIS player (\(streams.joined(separator: ", ")))",
            why: "without the plugin mpv has no MPRIS name: it is faded and muted instead of paused, and media keys cannot reach it",
            fix: "sudo apt install mpv-mpris")]
    }

    /// Media streams the running daemon could not match to a player: faded and muted, not paused.
    static func streamsWithoutPlayers(_ facts: SessionFacts) -> [Finding] {
        guard let status = facts.daemon else { return [] }
        return status.streams.filter { $0.class == "primary" && $0.player == nil && $0.application.lowercased() != "mpv" }
            .map { stream in
                let name = StatusReport.label(application: stream.application, appID: stream.appID)
                return Finding(
                    check: "no-player", problem: "\(name) (stream \(stream.index.map(String.init) ?? "?")) has no MPRIS player",
                    why: "the daemon pauses media through its player; without one it is faded and muted instead, and media keys cannot reach it",
                    fix: "turn on the app's MPRIS support (a plugin or setting), or claim Now Playing for it with a hook (docs/control-socket.md)")
            }
    }

    /// No source that tells which window has focus: sway/i3's socket is one; in a Wayland session DISPLAY
    /// is Xwayland's, blind to Wayland windows (the daemon does not follow it), so on KDE or GNOME only
    /// their focus extension is; with no Wayland, X11.
    static func focus(_ facts: SessionFacts) -> [Finding] {
        if facts.swaySocket != nil { return [] }
        if facts.waylandDisplay != nil, let focusExtension = ShellFocusExtension(currentDesktop: facts.currentDesktop) {
            guard facts.focusExtensionEnabled != true else { return [] }
            return [Finding(
                check: "focus", severity: .note,
                problem: "no focus source for this desktop: the \(focusExtension.name) is not \(facts.focusExtensionEnabled == false ? "enabled" : "known to be enabled")",
                why: "on \(focusExtension.desktop)'s Wayland session the daemon cannot see which window has focus by itself "
                    + "(DISPLAY is Xwayland's and shows X11 windows only): the shell has to tell it",
                fix: focusExtension.fix)]
        }
        // In a Wayland session the daemon leaves DISPLAY alone (Xwayland's, blind to Wayland windows).
        guard facts.display == nil || facts.waylandDisplay != nil else { return [] }
        return [Finding(
            check: "focus", severity: .note, problem: "no focus source for this desktop (no DISPLAY of its own, no sway/i3 socket)",
            why: facts.waylandDisplay != nil ? "on this Wayland desktop the daemon cannot see which window has focus by itself"
                : "there is no display: which window has focus is unknown, and an opt-in focus policy cannot act",
            fix: facts.waylandDisplay != nil
                ? "have the desktop send {\"op\":\"focus\",\"pid\":N} on the control socket when focus changes (docs/focus.md)"
                : "run it inside your graphical session (DISPLAY, or SWAYSOCK for sway) — nothing else changes without it")]
    }

    /// ALSA apps with no sound server: they reach the card past the daemon unless the plugin is set up.
    static func alsa(_ facts: SessionFacts) -> [Finding] {
        guard facts.serverAnswers == false else { return [] }
        let configured = facts.alsaConfigs.contains { text in
            text.split(separator: "\n").contains { line in
                let code = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                let words = code.split(whereSeparator: { $0 == " " || $0 == "\t" })
                return words.count >= 2 && words[0] == "type" && words[1] == "audiopolicy"
            }
        }
        guard !configured else { return [] }
        return [Finding(
            check: "alsa-plugin", problem: "no sound server answers and the ALSA plugin is not configured",
            why: "ALSA apps then play straight to the card: no `type audiopolicy` PCM in ~/.asoundrc or /etc/asound.conf",
            fix: "add the audiopolicy PCM to ~/.asoundrc (docs/alsa-plugin.md), or start your sound server: systemctl --user start pipewire-pulse")]
    }

    /// The daemon itself.
    /// The policy `run` would load does not: a drop-in or policy.toml with an error. A running daemon keeps
    /// its old policy on SIGHUP, and a starting one does not start.
    static func policy(_ facts: SessionFacts) -> [Finding] {
        guard let first = facts.policyErrors.first else { return [] }
        let more = facts.policyErrors.count > 1 ? " (and \(facts.policyErrors.count - 1) more)" : ""
        return [Finding(
            check: "policy", problem: "the policy files in force do not load: \(first)\(more)",
            why: "a daemon started now would not start, and a reload (SIGHUP) keeps the policy it had: your change is not in force",
            fix: "audio-policyd check (each error is FILE:LINE:COLUMN), fix the file, then: systemctl --user reload audio-policyd")]
    }

    static func daemon(_ facts: SessionFacts) -> [Finding] {
        guard facts.daemon == nil else { return [] }
        return [Finding(
            check: "daemon", problem: "the daemon is not running (no answer on \(facts.socket))",
            why: "nothing pauses, ducks or restores streams, and the checks of its streams could not be made",
            fix: "systemctl --user enable --now audio-policyd (or: audio-policyd run &)")]
    }
}
