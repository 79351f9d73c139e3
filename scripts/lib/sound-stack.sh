# Which sound server scripts/run gives the daemon, without ever changing the user's sound stack.
# Sourced by scripts/run and Tests/Setup/sound-stack.
#
# A desktop's sound server is the user's choice, made by the packages they installed: Debian's
# PipeWire desktop (`pipewire-audio`) conflicts with `pulseaudio`, so installing PulseAudio there
# removes PipeWire's metapackage, and PulseAudio's package enables its socket for every user — the
# next login may come up on another server. So:
#   - a server answers (PulseAudio, or PipeWire through pipewire-pulse): use it, install no server;
#   - none answers: start a private one (null sink, sockets under a private directory) of the kind
#     already installed, PipeWire when `pipewire` and `wireplumber` are there, else PulseAudio;
#   - PulseAudio is installed only when no sound server package is installed at all.
# DPKG_ADMINDIR (default dpkg's own) lets a test ask about another machine's package state.

# Packages that make up, or sit in place of, a sound server. None is ever installed while another is.
readonly SOUND_SERVER_PACKAGES=(pulseaudio pipewire pipewire-pulse wireplumber pipewire-audio
                                pipewire-media-session)

package_installed() {
    local admindir=()
    [ -n "${DPKG_ADMINDIR:-}" ] && admindir=(--admindir="$DPKG_ADMINDIR")
    dpkg-query "${admindir[@]}" -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

# Whether a PulseAudio-protocol server answers in this session ($PULSE_SERVER, or the session's
# socket). Never autospawns one: libpulse would start PulseAudio for a client that finds none.
pulse_server_answers() {
    command -v pactl >/dev/null 2>&1 || return 1
    local config
    config=$(mktemp "${TMPDIR:-/tmp}/audio-policyd-client.XXXXXX.conf")
    echo "autospawn = no" >"$config"
    local answered=1
    PULSE_CLIENTCONFIG="$config" timeout 5 pactl info >/dev/null 2>&1 && answered=0
    rm -f "$config"
    return $answered
}

# Whether PipeWire itself listens in this session (its native socket), answering or not for libpulse.
pipewire_listens() {
    local socket="${PIPEWIRE_REMOTE:-pipewire-0}"
    [[ $socket == /* ]] || socket="${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/$socket"
    [ -S "$socket" ]
}

# Prints what scripts/run does about the sound server, one word:
#   use-session        a server answers: the daemon uses it
#   private-pipewire   none answers; PipeWire, WirePlumber and pipewire-pulse are installed
#   private-pulseaudio none answers; PulseAudio is installed
#   install-pulseaudio none answers and no sound server package is installed
#   need-pipewire-pulse PipeWire is there (running, or installed with WirePlumber) without its
#                      PulseAudio server, which the daemon speaks: the user must add it
#   start-session      a sound server package is installed that scripts/run cannot start privately
#                      (pipewire-pulse without WirePlumber, say): the user's session must start it
sound_stack_plan() {
    if pulse_server_answers; then
        echo use-session
    elif package_installed pipewire && package_installed wireplumber; then
        if package_installed pipewire-pulse; then echo private-pipewire; else echo need-pipewire-pulse; fi
    elif pipewire_listens && ! package_installed pulseaudio; then
        echo need-pipewire-pulse
    elif package_installed pulseaudio; then
        echo private-pulseaudio
    else
        local package
        for package in "${SOUND_SERVER_PACKAGES[@]}"; do
            # pipewire alone (a screen-sharing dependency) is no sound server, and PulseAudio
            # does not conflict with it.
            [ "$package" = pipewire ] && continue
            if package_installed "$package"; then
                echo start-session
                return
            fi
        done
        echo install-pulseaudio
    fi
}
