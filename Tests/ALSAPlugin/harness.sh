# Shared by the ALSA tests that play real clients through JACK's dummy backend (Tests/ALSAPlugin/real-clients,
# Tests/ALSAPlugin/real-daemon): sourced, not run. It makes the work folder and the exit trap that stops
# every job of the sourcing shell, the checks ("PASS"/"FAIL" lines, counted), the plugin library, a private
# JACK server and jack_rec recordings.
#   source "$here/harness.sh" NAME     (NAME: the work folder's prefix)
# then: build_plugin (sets lib), start_jack (after HOME and JACK_DEFAULT_SERVER are set),
# start_recording FILE SECONDS / finish_recording.
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/${1:-apa-real}.XXXXXX")"
# Every process is started as a job of this shell (never in a subshell), so the jobs still running
# are exactly ours; a pid already waited for is never killed (it may belong to someone else by then).
cleanup() {
    local pids
    pids=$(jobs -p)
    # SIGTERM first: a jackd killed with SIGKILL leaves its entry in JACK's shared registry.
    if [ -n "$pids" ]; then
        kill $pids 2>/dev/null || true
        for _ in $(seq 20); do kill -0 $pids 2>/dev/null || break; sleep 0.1; done
        kill -9 $pids 2>/dev/null || true
    fi
    wait 2>/dev/null || true
    [ -n "${APA_KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

passed=0 failed=0
check() {  # check DESCRIPTION COMMAND...: a passing command is a passed check
    if "${@:2}"; then
        passed=$((passed + 1)); echo "PASS $1"
    else
        failed=$((failed + 1)); echo "FAIL $1"
    fi
}
# True if the arithmetic comparison holds ("a >= b" with decimals).
holds() { python3 -c "import sys; sys.exit(0 if ($1) else 1)"; }
# Waits until FILE has a line matching the extended regex, or TIMEOUT seconds pass.
wait_for_line() {
    local file=$1 pattern=$2 timeout=${3:-10} waited=0
    until grep -qE "$pattern" "$file" 2>/dev/null; do
        sleep 0.05; waited=$((waited + 1))
        [ $waited -lt $((timeout * 20)) ] || { echo "timed out waiting for /$pattern/ in $file" >&2; return 1; }
    done
}
monotonic() { python3 -c 'import time; print(time.monotonic())'; }
# Values from the fake daemon's JSON log, one a line: log_values LOG FILTER EXPRESSION (Python, on entry e)
log_values() {
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if eval(sys.argv[2]):
        print(eval(sys.argv[3]))
PY
}

# Sets lib: the plugin library, APA_ALSA_PLUGIN if given (absolute), else compiled here with gcc.
build_plugin() {
    lib=${APA_ALSA_PLUGIN:-}
    if [ -z "$lib" ]; then
        lib="$work/libasound_module_pcm_audiopolicy.so"
        gcc -std=gnu11 -O2 -Wall -Wextra -Werror -fPIC -DPIC -shared -I"$root/Sources/CAudioPolicyALSAPlugin/include" \
            "$root"/Sources/CAudioPolicyALSAPlugin/*.c -o "$lib" -lasound -lm
    fi
    lib="$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")"
}

# JACK's port list, bounded (exit status 124 when it timed out): a JACK client can block for good in a
# futex as another client registers (a clean clone's CI: the jack_lsp polling for jack_rec's ports blocked
# 16 minutes, on past jack_rec's end, while a new jack_lsp answered at once). It answers in milliseconds.
jack_ports() { timeout -k 1 1 jack_lsp "$@" 2>/dev/null; }

# Starts jackd (dummy backend, 48 kHz, 512-frame periods) as a job; returns once it answers.
start_jack() {
    # JACK registers every server in one shared-memory registry and refuses a ninth ("Too many servers
    # already active"); a jackd killed with SIGKILL never unregisters. With no jackd running at all, the
    # registry and its segments are stale: clear them.
    if ! pgrep -x jackd >/dev/null && ! pgrep -x jackdbus >/dev/null; then
        rm -f /dev/shm/jack-shm-registry /dev/shm/jack_apa-test-* /dev/shm/jack_sem.*_apa-test-* 2>/dev/null || true
    fi
    jackd --no-realtime -d dummy -r 48000 -p 512 >"$work/jackd.log" 2>&1 &
    for _ in $(seq 100); do jack_ports >/dev/null && break; sleep 0.1; done
    jack_ports >/dev/null || { echo "jackd did not start:"; cat "$work/jackd.log"; exit 1; }
}

rec_pid=
start_recording() {  # start_recording FILE SECONDS: returns once jack_rec's ports exist
    local attempt ports status
    # A port list that blocked (above) took part of the recording's time: that recording starts again.
    for attempt in 1 2 3; do
        jack_rec -f "$1" -d "$2" system:capture_1 system:capture_2 >"$work/jack_rec.log" 2>&1 &
        rec_pid=$!
        status=0
        for _ in $(seq 100); do
            ports=$(jack_ports) || status=$?
            [ "$status" = 124 ] && break
            grep -q '^jackrec:input2$' <<<"$ports" && return 0
            kill -0 "$rec_pid" 2>/dev/null || break
            sleep 0.05
        done
        kill "$rec_pid" 2>/dev/null || true; wait "$rec_pid" 2>/dev/null || true
        [ "$status" = 124 ] || break
        echo "   (jack_lsp blocked; recording again, attempt $((attempt + 1)))" >&2
    done
    echo "jack_rec did not start: $(cat "$work/jack_rec.log")" >&2; return 1
}
finish_recording() { wait "$rec_pid"; }

