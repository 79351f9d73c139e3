// audio-policyd focus (GNOME Shell 45 and later): tells the daemon which window has focus, so that an
// opt-in focus policy (policies/focus.toml) can duck the apps you look away from. On GNOME's Wayland
// session the daemon cannot see focus itself (org.gnome.Shell.Introspect needs unsafe mode since 41);
// the Shell can, so this extension tells the daemon's control socket on every focus change.

import Shell from 'gi://Shell';
import {Extension} from 'resource:///org/gnome/shell/extensions/extension.js';

import {FocusTeller, tellLastWindows} from './focusTeller.js';

export default class AudioPolicydFocus extends Extension {
    enable() {
        this._teller = new FocusTeller();
        this._tracker = Shell.WindowTracker.get_default();
        this._focusChanged = global.display.connect('notify::focus-window', () => this._tell());
        this._stopClosing = tellLastWindows(global.display, this._teller, window => this._appOf(window));
        this._tell();
    }

    disable() {
        global.display.disconnect(this._focusChanged);
        this._stopClosing();
        this._stopClosing = null;
        this._teller.close();
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
