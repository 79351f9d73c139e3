// How the extension tells audio-policyd which window has focus: `{"op":"focus","pid":N,"app":"ID"}`
// lines on the daemon's control socket (README: Control socket), over one connection kept open and
// made again when the daemon restarts; and when a process's last window closed (`"lastWindowClosed":true`,
// which may pause the Now Playing app: `closed-window`). Gio and GLib only, so it runs under plain gjs
// too (the tests do); the Shell's display is handed in.

import Gio from 'gi://Gio';
import GLib from 'gi://GLib';

/** The daemon's control socket, as the daemon finds it (ControlSocketPath): in $XDG_RUNTIME_DIR. */
export function controlSocketPath() {
    const runtime = GLib.getenv('XDG_RUNTIME_DIR') || `/tmp/audio-policyd-${new Gio.Credentials().get_unix_user()}`;
    return `${runtime}/audio-policyd/control`;
}

export class FocusTeller {
    constructor(path = controlSocketPath()) {
        this._path = path;
        this._connection = null;
        this._cancellable = null;
    }

    /**
     * A window of process `pid` (0: unknown) and app `app` (an app id, a WM class, or '') has focus;
     * neither: no window has. With `lastWindowClosed`, not focus: the last window of that process closed.
     * Returns whether the daemon was reached (it may not be running: then the
     * next focus change tries again).
     */
    tell(pid, app, lastWindowClosed = false) {
        const request = {op: 'focus'};
        if (pid > 0)
            request.pid = pid;
        if (app)
            request.app = app;
        if (lastWindowClosed)
            request.lastWindowClosed = true;
        const line = new TextEncoder().encode(`${JSON.stringify(request)}\n`);
        // A connection the daemon closed (it restarted) fails on the first write: connect once more.
        for (let attempt = 0; attempt < 2; attempt++) {
            try {
                this._connect().get_output_stream().write_all(line, null);
                return true;
            } catch (e) {
                this.close();
            }
        }
        return false;
    }

    close() {
        this._cancellable?.cancel();
        try {
            this._connection?.close(null);
        } catch (e) {
        }
        this._connection = null;
        this._cancellable = null;
    }

    _connect() {
        if (this._connection && !this._connection.is_closed())
            return this._connection;
        const connection = new Gio.SocketClient().connect(Gio.UnixSocketAddress.new(this._path), null);
        this._connection = connection;
        this._cancellable = new Gio.Cancellable();
        this._drain(new Gio.DataInputStream({base_stream: connection.get_input_stream()}), connection, this._cancellable);
        return connection;
    }

    /** Reads the daemon's replies and drops them, so they never pile up; its end of the connection ends ours. */
    _drain(replies, connection, cancellable) {
        replies.read_line_async(GLib.PRIORITY_DEFAULT, cancellable, (stream, result) => {
            let line = null;
            try {
                [line] = stream.read_line_finish_utf8(result);
            } catch (e) {
            }
            if (line !== null)
                this._drain(replies, connection, cancellable);
            else if (this._connection === connection)
                this.close();
        });
    }
}

/**
 * Follows windows closing on `display` (the Shell's `global.display`): when the last window of a process
 * goes (`unmanaged`), `teller` says so with the window's pid and app. Returns a function that stops it.
 */
export function tellLastWindows(display, teller, appOf) {
    const watched = new Map();
    const watch = window => {
        if (watched.has(window))
            return;
        const pid = window.get_pid();
        const app = appOf(window);
        watched.set(window, window.connect('unmanaged', () => {
            watched.delete(window);
            if (pid > 0 && ![...watched.keys()].some(other => other.get_pid() === pid))
                teller.tell(pid, app, true);
        }));
    };
    for (const window of display.list_all_windows())
        watch(window);
    const created = display.connect('window-created', (_display, window) => watch(window));
    return () => {
        display.disconnect(created);
        for (const [window, id] of watched)
            window.disconnect(id);
        watched.clear();
    };
}
