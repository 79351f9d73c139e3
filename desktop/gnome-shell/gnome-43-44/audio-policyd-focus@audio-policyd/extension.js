// audio-policyd focus (GNOME Shell 43 and 44, whose extensions are not yet ES modules): tells the daemon
// which window has focus, as ../../audio-policyd-focus@audio-policyd/extension.js does for 45 and later.
// The socket client is the same file (focusTeller.js, installed next to this one by `make install`),
// loaded with import(), which GJS 1.74 (GNOME 43) allows from a legacy script.

const {Shell} = imports.gi;
const ExtensionUtils = imports.misc.extensionUtils;

class AudioPolicydFocus {
    enable() {
        const generation = this._generation = (this._generation ?? 0) + 1;
        const uri = ExtensionUtils.getCurrentExtension().dir.get_child('focusTeller.js').get_uri();
        import(uri).then(module => {
            if (generation !== this._generation)
                return; // disabled (and maybe enabled again) while it loaded
            this._teller = new module.FocusTeller();
            this._tracker = Shell.WindowTracker.get_default();
            this._focusChanged = global.display.connect('notify::focus-window', () => this._tell());
            this._stopClosing = module.tellLastWindows(global.display, this._teller, window => this._appOf(window));
            this._tell();
        }).catch(e => logError(e, 'audio-policyd focus'));
    }

    disable() {
        this._generation = (this._generation ?? 0) + 1;
        if (this._focusChanged)
            global.display.disconnect(this._focusChanged);
        this._stopClosing?.();
        this._stopClosing = null;
        this._teller?.close();
        this._teller = null;
        this._tracker = null;
        this._focusChanged = null;
    }

    _tell() {
        const window = global.display.focus_window;
        if (!window) {
            this._teller.tell(0, '');
            return;
        }
        this._teller.tell(window.get_pid(), this._appOf(window));
    }

    _appOf(window) {
        // The app's id without ".desktop" (org.gnome.Nautilus); a window with no .desktop file gets
        // "window:N" from the tracker, so its WM class instead.
        const id = this._tracker.get_window_app(window)?.get_id()?.replace(/\.desktop$/, '');
        return id && !id.startsWith('window:') ? id : window.get_wm_class() ?? '';
    }
}

function init() {
    return new AudioPolicydFocus();
}
