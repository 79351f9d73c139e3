// audio-policyd focus: tells the daemon which window KWin made active, so that an opt-in focus policy
// (policies/focus.toml) can duck the apps you look away from. On Plasma's Wayland session the daemon
// cannot see focus itself, and a KWin script cannot open a socket or run a command: callDBus is its one
// way out, so it calls org.audiopolicyd.Focus.Activated(pid, appId) on the daemon's session bus name.
// No window active: pid 0 and an empty app id. A daemon that is not running makes the call fail quietly.
// When the last window of a process closes it calls LastWindowClosed(pid, appId): an opt-in policy
// (`closed-window = "pause"`) pauses the Now Playing app then.

function appId(window) {
    // desktopFileName ("org.kde.dolphin") is a string on Plasma 5 and 6; resourceClass is a byte array on 5.
    if (window.desktopFileName) return String(window.desktopFileName);
    return typeof window.resourceClass === "string" ? window.resourceClass : "";
}

function tell(window) {
    var pid = window && window.pid > 0 ? window.pid : 0;
    callDBus("org.audiopolicyd.Focus", "/org/audiopolicyd/Focus", "org.audiopolicyd.Focus", "Activated",
             pid, window ? appId(window) : "");
}

function windows() {
    return workspace.windowList ? workspace.windowList() : workspace.clientList();
}

function closed(window) {
    var pid = window && window.pid > 0 ? window.pid : 0;
    if (pid === 0) return;
    var all = windows();
    for (var i = 0; i < all.length; i++) {
        if (all[i] !== window && all[i].pid === pid) return;
    }
    callDBus("org.audiopolicyd.Focus", "/org/audiopolicyd/Focus", "org.audiopolicyd.Focus", "LastWindowClosed",
             pid, appId(window));
}

// Plasma 6 names them windowActivated, windowRemoved (and activeWindow), Plasma 5 clientActivated,
// clientRemoved (and activeClient).
if (workspace.windowActivated) {
    workspace.windowActivated.connect(tell);
    workspace.windowRemoved.connect(closed);
    tell(workspace.activeWindow);
} else {
    workspace.clientActivated.connect(tell);
    workspace.clientRemoved.connect(closed);
    tell(workspace.activeClient);
}
