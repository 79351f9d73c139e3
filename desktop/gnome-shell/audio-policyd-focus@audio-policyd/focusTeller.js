// How the extension tells audio-policyd which window has focus: `{"op":"focus","pid":N,"app":"ID"}`
// lines on the daemon's control socket (README: Control socket), over one connection kept open and
// made again when the daemon restarts. Gio and GLib only, so it runs under plain gjs too (the tests do).

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
     * neither: no window has. Returns whether the daemon was reached (it may not be running: then the
     * next focus change tries again).
     */
    tell(pid, app) {
        const request = {op: 'focus'};
        if (pid > 0)
            request.pid = pid;
        if (app)
            request.app = app;
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
