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
            this._tell();
        }).catch(e => logError(e, 'audio-policyd focus'));
    }

    disable() {
        this._generation = (this._generation ?? 0) + 1;
        if (this._focusChanged)
            global.display.disconnect(this._focusChanged);
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
        const id = this._tracker.get_window_app(window)?.get_id()?.replace(/\.desktop$/, '');
        this._teller.tell(window.get_pid(), id && !id.startsWith('window:') ? id : window.get_wm_class() ?? '');
    }
}

function init() {
    return new AudioPolicydFocus();
}
