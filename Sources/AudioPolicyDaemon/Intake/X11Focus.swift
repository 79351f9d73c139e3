import AudioPolicy
import CXCB
import EventLoop
import Glibc
import Logging

/// Which window has focus on the X11 display, as engine focus events: the root window's
/// `_NET_ACTIVE_WINDOW` changes (PropertyNotify, no polling) and the active window's `_NET_WM_PID`; and
/// which app's last window closed: the root's `_NET_CLIENT_LIST` (every managed window), each window's
/// pid read when it appears there (a destroyed window's properties cannot be read any more).
///
/// With no `DISPLAY`, a display that cannot be opened, or a Wayland session (Xwayland's display), there
/// is no source and the daemon runs as without focus. A display that goes away is not reconnected: focus becomes unknown, so what focus
/// ducked comes back.
final class X11Focus {
    private let connection: OpaquePointer
    private let root: xcb_window_t
    private let activeWindow: xcb_atom_t
    private let windowPID: xcb_atom_t
    private let clientList: xcb_atom_t
    /// The windows of `_NET_CLIENT_LIST` as last read, with their `_NET_WM_PID` (nil: none).
    private var clients: [xcb_window_t: Int?] = [:]
    private var watch: MainLoop.IOWatch?
    private let log: Logger
    private let feed: (Event) -> Void

    /// Connects to `$DISPLAY` and starts watching; nil when there is no display to watch, or when it is
    /// Xwayland's: in a Wayland session its active window knows only X11 windows, and the shell's own
    /// source (sway's IPC, the KWin script, the GNOME extension) would be contradicted by it.
    init?(loop: MainLoop, log: Logger, feed: @escaping (Event) -> Void) {
        guard let display = getenv("DISPLAY").map({ String(cString: $0) }), !display.isEmpty else { return nil }
        if let wayland = getenv("WAYLAND_DISPLAY").map({ String(cString: $0) }), !wayland.isEmpty {
            let why = "blind to Wayland windows; focus comes from the desktop's script or extension (docs/focus.md)"
            log.info("focus: DISPLAY \(display) is Xwayland's (WAYLAND_DISPLAY \(wayland)), \(why)")
            return nil
        }
        var screenNumber: Int32 = 0
        guard let connection = xcb_connect(nil, &screenNumber) else { return nil }
        guard xcb_connection_has_error(connection) == 0 else {
            log.info("focus: cannot open X display \(display); focus is not followed")
            xcb_disconnect(connection)
            return nil
        }
        var screens = xcb_setup_roots_iterator(xcb_get_setup(connection))
        for _ in 0..<max(0, Int(screenNumber)) where screens.rem > 0 { xcb_screen_next(&screens) }
        guard screens.rem > 0, let screen = screens.data,
              let active = Self.atom("_NET_ACTIVE_WINDOW", connection), let pid = Self.atom("_NET_WM_PID", connection),
              let clientList = Self.atom("_NET_CLIENT_LIST", connection)
        else {
            xcb_disconnect(connection)
            return nil
        }
        self.connection = connection
        self.root = screen.pointee.root
        self.activeWindow = active
        self.windowPID = pid
        self.clientList = clientList
        self.log = log
        self.feed = feed
        var mask = XCB_EVENT_MASK_PROPERTY_CHANGE.rawValue
        xcb_change_window_attributes(connection, root, XCB_CW_EVENT_MASK.rawValue, &mask)
        xcb_flush(connection)
        log.info("focus: following the active window on X display \(display)")
        watch = MainLoop.IOWatch(loop: loop, fd: xcb_get_file_descriptor(connection), events: .readable) { [unowned self] _ in
            self.readEvents()
        }
        clientsChanged()
        focusChanged()
    }

    deinit {
        watch = nil
        xcb_disconnect(connection)
    }

    private static func atom(_ name: String, _ connection: OpaquePointer) -> xcb_atom_t? {
        let cookie = xcb_intern_atom(connection, 0, UInt16(name.utf8.count), name)
        guard let reply = xcb_intern_atom_reply(connection, cookie, nil) else { return nil }
        defer { free(reply) }
        return reply.pointee.atom
    }

    private func readEvents() {
        var changed = false
        var clientsMoved = false
        while let event = xcb_poll_for_event(connection) {
            if event.pointee.response_type & 0x7f == XCB_PROPERTY_NOTIFY {
                let notify = UnsafeRawPointer(event).assumingMemoryBound(to: xcb_property_notify_event_t.self)
                if notify.pointee.window == root, notify.pointee.atom == activeWindow { changed = true }
                if notify.pointee.window == root, notify.pointee.atom == clientList { clientsMoved = true }
            }
            free(event)
        }
        if xcb_connection_has_error(connection) != 0 {
            log.warning("focus: the X display went away; focus is unknown from now on")
            watch = nil
            feed(.focusUnknown)
            return
        }
        // Windows gone first: the focus that follows a close is then given to an app that knows it.
        if clientsMoved { clientsChanged() }
        if changed { focusChanged() }
    }

    /// Reads `_NET_CLIENT_LIST` anew: a process none of whose windows is left on it closed its last window
    /// (a tray player's process lives on; one that quit has no streams to pause either).
    private func clientsChanged() {
        let listed = Set(properties(clientList, of: root, type: XCB_ATOM_WINDOW.rawValue))
        var closed: [Int] = []
        for (window, pid) in clients where !listed.contains(window) {
            clients[window] = nil
            if let pid { closed.append(pid) }
        }
        for window in listed where clients[window] == nil {
            clients[window] = property(windowPID, of: window, type: XCB_ATOM_CARDINAL.rawValue).map(Int.init)
        }
        let open = Set(clients.values.compactMap { $0 })
        for pid in Set(closed).subtracting(open).sorted() {
            feed(.lastWindowClosed(AppIdentity(process: pid, name: nil)))
        }
    }

    /// Reads the active window and its process, and tells the engine.
    private func focusChanged() {
        guard let window = property(activeWindow, of: root, type: XCB_ATOM_WINDOW.rawValue), window != 0 else {
            feed(.focus(nil))
            return
        }
        let pid = property(windowPID, of: window, type: XCB_ATOM_CARDINAL.rawValue).map(Int.init)
        // A window that names no process is some other app's: it has focus, and no app we know does.
        feed(.focus(pid.map { AppIdentity(process: $0, name: nil) } ?? AppIdentity(name: "x11-window-\(window)")))
    }

    /// A 32-bit property's first value (a window id, a pid); nil when absent.
    private func property(_ atom: xcb_atom_t, of window: xcb_window_t, type: xcb_atom_t) -> UInt32? {
        properties(atom, of: window, type: type, limit: 1).first
    }

    /// A 32-bit property's values (a window list), at most `limit`; empty when absent.
    private func properties(_ atom: xcb_atom_t, of window: xcb_window_t, type: xcb_atom_t,
                            limit: UInt32 = 16384) -> [UInt32] {
        let cookie = xcb_get_property(connection, 0, window, atom, type, 0, limit)
        guard let reply = xcb_get_property_reply(connection, cookie, nil) else { return [] }
        defer { free(reply) }
        let count = Int(xcb_get_property_value_length(reply)) / 4
        guard reply.pointee.format == 32, count > 0, let value = xcb_get_property_value(reply) else { return [] }
        return (0..<count).map { value.load(fromByteOffset: $0 * 4, as: UInt32.self) }
    }
}
