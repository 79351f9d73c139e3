import CDBus
import EventLoop

/// Runs one libdbus connection on a ``MainLoop``: its watches, its timeouts and its dispatching.
///
/// libdbus holds this object through the userdata of its watch, timeout, dispatch-status and
/// wake-up functions and of the message filter, each registration retaining it once and libdbus
/// releasing it through the matching free function; it never holds the ``BusConnection``.
final class LoopIntegration {
    let loop: MainLoop
    /// Borrowed: the ``BusConnection`` owns the reference.
    private let connection: OpaquePointer
    private var watches: [OpaquePointer: MainLoop.IOWatch] = [:]
    private var timeouts: [OpaquePointer: MainLoop.Timer] = [:]
    /// Fires on the next loop iteration whenever received messages wait to be dispatched.
    private var dispatchSoon: MainLoop.Timer?
    /// Where dispatched messages go: true when one was handled.
    var onMessage: ((BusMessage) -> Bool)?

    init(loop: MainLoop, connection: OpaquePointer) {
        self.loop = loop
        self.connection = connection
    }

    /// Hands libdbus our watch, timeout and dispatch functions.
    func install() {
        dispatchSoon = MainLoop.Timer(loop: loop) { [unowned self] in self.dispatch() }
        let release = BusConnection.releaseIntegration
        _ = dbus_connection_set_watch_functions(connection, Self.addWatch, Self.removeWatch, Self.toggleWatch,
                                                retained(), release)
        _ = dbus_connection_set_timeout_functions(connection, Self.addTimeout, Self.removeTimeout,
                                                  Self.toggleTimeout, retained(), release)
        dbus_connection_set_dispatch_status_function(connection, Self.dispatchStatus, retained(), release)
        dbus_connection_set_wakeup_main_function(connection, Self.wakeUp, retained(), release)
        // Something may have arrived already (the authentication exchange).
        dispatchSoon?.schedule(after: 0)
    }

    private func retained() -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(self).toOpaque()
    }

    private static func borrow(_ userdata: UnsafeMutableRawPointer?) -> LoopIntegration? {
        userdata.map { Unmanaged<LoopIntegration>.fromOpaque($0).takeUnretainedValue() }
    }

    // MARK: - Dispatching

    private func dispatch() {
        // A handler may drop the BusConnection (and its reference) mid-dispatch: keep the C
        // connection alive until the queue is done.
        dbus_connection_ref(connection)
        defer { dbus_connection_unref(connection) }
        while dbus_connection_dispatch(connection) == DBUS_DISPATCH_DATA_REMAINS {}
    }

    private static let dispatchStatus: DBusDispatchStatusFunction = { _, status, userdata in
        guard let integration = borrow(userdata), status != DBUS_DISPATCH_COMPLETE else { return }
        integration.dispatchSoon?.schedule(after: 0)
    }

    private static let wakeUp: DBusWakeupMainFunction = { userdata in
        borrow(userdata)?.dispatchSoon?.schedule(after: 0)
    }

    // MARK: - Watches

    private static func events(of watch: OpaquePointer) -> MainLoop.IOWatch.Events {
        guard dbus_watch_get_enabled(watch) != 0 else { return [] }
        let flags = dbus_watch_get_flags(watch)
        var events: MainLoop.IOWatch.Events = []
        if flags & DBUS_WATCH_READABLE.rawValue != 0 { events.insert(.readable) }
        if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { events.insert(.writable) }
        return events
    }

    private static let addWatch: DBusAddWatchFunction = { watch, userdata in
        guard let watch, let integration = borrow(userdata) else { return 0 }
        let fd = dbus_watch_get_unix_fd(watch)
        integration.watches[watch] = MainLoop.IOWatch(loop: integration.loop, fd: fd, events: events(of: watch)) { happened in
            guard dbus_watch_get_enabled(watch) != 0 else { return }
            var flags: UInt32 = 0
            if happened.contains(.readable) { flags |= DBUS_WATCH_READABLE.rawValue }
            if happened.contains(.writable) { flags |= DBUS_WATCH_WRITABLE.rawValue }
            if happened.contains(.hangup) { flags |= DBUS_WATCH_HANGUP.rawValue }
            if happened.contains(.error) { flags |= DBUS_WATCH_ERROR.rawValue }
            _ = dbus_watch_handle(watch, flags)
        }
        return 1
    }

    private static let removeWatch: DBusRemoveWatchFunction = { watch, userdata in
        guard let watch, let integration = borrow(userdata) else { return }
        integration.watches[watch] = nil
    }

    private static let toggleWatch: DBusWatchToggledFunction = { watch, userdata in
        guard let watch, let integration = borrow(userdata) else { return }
        integration.watches[watch]?.events = events(of: watch)
    }

    // MARK: - Timeouts

    private static let addTimeout: DBusAddTimeoutFunction = { timeout, userdata in
        guard let timeout, let integration = borrow(userdata) else { return 0 }
        let timer = MainLoop.Timer(loop: integration.loop) { [unowned integration] in
            guard dbus_timeout_get_enabled(timeout) != 0 else { return }
            // Re-armed first: libdbus timeouts repeat until removed or disabled.
            integration.arm(timeout)
            _ = dbus_timeout_handle(timeout)
        }
        integration.timeouts[timeout] = timer
        integration.arm(timeout)
        return 1
    }

    private static let removeTimeout: DBusRemoveTimeoutFunction = { timeout, userdata in
        guard let timeout, let integration = borrow(userdata) else { return }
        integration.timeouts[timeout] = nil
    }

    private static let toggleTimeout: DBusTimeoutToggledFunction = { timeout, userdata in
        guard let timeout, let integration = borrow(userdata) else { return }
        integration.arm(timeout)
    }

    private func arm(_ timeout: OpaquePointer) {
        guard let timer = timeouts[timeout] else { return }
        if dbus_timeout_get_enabled(timeout) != 0 {
            timer.schedule(after: UInt64(max(0, dbus_timeout_get_interval(timeout))) * 1000)
        } else {
            timer.cancel()
        }
    }
}
