// For audio-policyd's tests only: moves focus in a headless GNOME Shell, where no input device can
// (org.gnome.Shell.Eval needs unsafe mode). Activate(pid) activates that process's window; Close(pid)
// closes its windows as their close button would.
const {Gio} = imports.gi;
const Main = imports.ui.main;

const iface = `<node><interface name="org.audiopolicyd.tests.FocusDriver">
  <method name="Activate"><arg type="i" direction="in"/><arg type="b" direction="out"/></method>
  <method name="Focused"><arg type="i" direction="out"/></method>
  <method name="Close"><arg type="i" direction="in"/><arg type="b" direction="out"/></method>
</interface></node>`;

class FocusDriver {
    enable() {
        this._object = Gio.DBusExportedObject.wrapJSObject(iface, this);
        this._object.export(Gio.DBus.session, '/org/audiopolicyd/tests/FocusDriver');
        this._name = Gio.bus_own_name_on_connection(Gio.DBus.session, 'org.audiopolicyd.tests.FocusDriver',
            Gio.BusNameOwnerFlags.NONE, null, null);
    }

    disable() {
        Gio.bus_unown_name(this._name);
        this._object.unexport();
    }

    Activate(pid) {
        const window = global.get_window_actors().map(a => a.meta_window).find(w => w.get_pid() === pid);
        if (!window)
            return false;
        Main.activateWindow(window);
        return true;
    }

    Close(pid) {
        const windows = global.get_window_actors().map(a => a.meta_window).filter(w => w.get_pid() === pid);
        windows.forEach(w => w.delete(global.get_current_time()));
        return windows.length > 0;
    }

    Focused() {
        return global.display.focus_window?.get_pid() ?? 0;
    }
}

function init() {
    return new FocusDriver();
}
