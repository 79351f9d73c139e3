# Installs the Debian packages audio-policyd builds and tests with, when any is missing.
# Sourced by scripts/run and scripts/test.

# Needed to build and run the daemon: libraries and a client (pactl), no sound server. Safe on any
# sound stack: PipeWire's desktop (pipewire-audio) keeps all of them installed itself.
BUILD_PACKAGES=(libpulse-dev libdbus-1-dev libxcb1-dev pulseaudio-utils)
# Needed by the tests: real servers, real players, real measurements. PulseAudio and PipeWire are
# installed side by side (Debian lets pulseaudio and pipewire-pulse coexist; pipewire-audio does not,
# and install_missing never removes it).
TEST_PACKAGES=(pulseaudio libasound2-dev libasound2-plugins alsa-utils pipewire pipewire-pulse wireplumber dbus
               mpv mpv-mpris playerctl sox tmux
               # Focus (Tests/IntegrationTests: X11 focus): a virtual display, a window manager that keeps
               # _NET_ACTIVE_WINDOW, and a way to move focus.
               xvfb openbox xdotool x11-utils
               # The Now Playing app's window closing (ClosedWindowTests): the window manager closes a
               # window by title, and Tests/RealApps/bin/tray-player (GTK 3, GStreamer's pulsesink, MPRIS
               # through dbus-python) plays on after it, as tray players do.
               wmctrl python3-gi gir1.2-gtk-3.0 gir1.2-gstreamer-1.0 gstreamer1.0-plugins-base
               gstreamer1.0-plugins-good python3-dbus
               # Focus under sway (SwayFocusTests): sway headless, run as an unprivileged user (scripts/test).
               sway
               # The desktop scripts (DesktopScriptTests): the GNOME extension's socket client under gjs, and
               # every shipped script parsed by node; the extension in a real GNOME Shell and the KWin script
               # in a real KWin, both headless (GnomeShellFocusTests, KWinFocusTests).
               gjs nodejs gnome-shell kwin-wayland
               # The ALSA plugin's tests (Tests/ALSAPlugin): gcc for the plugin and the unit tests; JACK's
               # dummy backend paces ALSA with no card (jackd2, and libasound2-plugins' jack PCM).
               gcc libc6-dev make pkg-config jackd2 python3
               # Real apps nobody here wrote (Tests/RealApps): browsers under Xvfb, the screen reader's
               # speech server, libcanberra's event sounds.
               chromium firefox-esr xvfb xauth speech-dispatcher speech-dispatcher-espeak-ng espeak-ng
               libcanberra-pulse gnome-session-canberra
               # Games (GameAudioTests): SDL2's test programs (loopwave loops a WAV as an SDL game plays its
               # soundtrack) and alure's utilities (alurestream plays a file through OpenAL Soft).
               libsdl2-tests alure-utils
               # Timeline pictures (TimelineTests): render the SVG to PNG and decode it to check it is drawn.
               librsvg2-bin netpbm
               # Sandboxed apps (SandboxTests): a Flatpak-like sandbox, its bus through the proxy Flatpak uses.
               bubblewrap xdg-dbus-proxy
               # The Debian package (Tests/Package/deb): built with dpkg-dev's tools, checked by lintian.
               dpkg-dev lintian)

source "$(dirname "${BASH_SOURCE[0]}")/sound-stack.sh"

# Installs those of "$@" that are missing, and never removes a package to do it: apt's --no-remove
# makes a conflict (pulseaudio on a pipewire-audio desktop) an error that changes nothing.
# AUDIO_POLICYD_APT_SIMULATE=STATUS-FILE only asks apt what it would do on a machine with that dpkg
# status (Tests/Setup/sound-stack), with no update and no sudo.
install_missing() {
    local missing=()
    local package
    for package in "$@"; do
        package_installed "$package" || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local apt=(apt-get install -y -qq --no-install-recommends --no-remove)
    if [ -n "${AUDIO_POLICYD_APT_SIMULATE:-}" ]; then
        apt-get -o Dir::State::status="$AUDIO_POLICYD_APT_SIMULATE" "${apt[@]:1}" --simulate "${missing[@]}"
        return
    fi
    echo "installing: ${missing[*]}" >&2
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" "${apt[@]}" "${missing[@]}" >&2
}

require_swift() {
    command -v swift >/dev/null 2>&1 && return 0
    [ -x /opt/swift/usr/bin/swift ] && export PATH="/opt/swift/usr/bin:$PATH" && return 0
    echo "swift is not installed: get a Swift 6 toolchain from swift.org and put it on PATH" >&2
    exit 1
}
