import CDBus
import EventLoop

/// A private connection to a D-Bus message bus, run by the daemon's ``MainLoop``.
///
/// libdbus is driven the way PulseAudio's own `dbus-util.c` drives it: its watches become
/// ``MainLoop/IOWatch``es, its timeouts ``MainLoop/Timer``s, and whenever incoming data waits to be
/// dispatched a zero-delay timer dispatches it from the loop (libdbus forbids dispatching from inside
/// its own callbacks). Nothing blocks: even `Hello` is an asynchronous call, so the connection is
/// usable at once (libdbus queues what is sent before the bus answers).
///
/// Method calls get their reply in a closure; signals reach the handlers registered with
/// ``onSignal(interface:member:_:)``; method calls to our own objects reach the handler registered
/// with ``export(path:_:)``. Like every wrapper on the loop, it must only be touched from the loop's
/// thread.
public final class BusConnection {
    /// A handler for method calls to one of our object paths; it must send a reply (or an error).
    public typealias MethodHandler = (BusMessage) -> Void
    /// A handler for signals.
    public typealias SignalHandler = (BusMessage) -> Void

    let handle: OpaquePointer
    private let integration: LoopIntegration
    /// The userdata the message filter was installed with (needed again to remove it).
    private let filterData: UnsafeMutableRawPointer

    private var signalHandlers: [(interface: String, member: String, handler: SignalHandler)] = []
    private var objects: [String: MethodHandler] = [:]
    private var closed = false

    /// The loop the connection runs on (for a caller's own timers, as a retry's).
    public var loop: MainLoop { integration.loop }

    /// Our unique name on the bus (`:1.42`), once `Hello` has been answered.
    public private(set) var uniqueName: String?
    /// Called once when the bus goes away (it closed the connection, or the socket failed).
    public var onDisconnect: () -> Void = {}

    /// Connects to the bus at `address` (e.g. `$DBUS_SESSION_BUS_ADDRESS`) and says `Hello`;
    /// `onRegistered` runs when the bus has answered with our unique name.
    public init(loop: MainLoop, address: String,
                onRegistered: @escaping (Result<String, BusError>) -> Void = { _ in }) throws(BusError) {
        var error = DBusError()
        dbus_error_init(&error)
        guard let handle = dbus_connection_open_private(address, &error) else {
            throw BusError.noBus(BusError.taking(&error).description)
        }
        dbus_connection_set_exit_on_disconnect(handle, 0)
        self.handle = handle
        integration = LoopIntegration(loop: loop, connection: handle)
        filterData = Unmanaged.passRetained(integration).toOpaque()
        integration.install()
        integration.onMessage = { [weak self] message in self?.route(message) ?? false }
        guard dbus_connection_add_filter(handle, Self.filter, filterData, Self.releaseIntegration) != 0 else {
            Unmanaged<LoopIntegration>.fromOpaque(filterData).release()
            dbus_connection_close(handle)
            dbus_connection_unref(handle)
            throw BusError.outOfMemory
        }
        register(onRegistered)
    }

    deinit {
        integration.onMessage = nil
        // Closing runs libdbus's remove-watch/timeout callbacks; the last unref then frees the
        // loop integration through the free functions it was installed with.
        dbus_connection_remove_filter(handle, Self.filter, filterData)
        dbus_connection_close(handle)
        dbus_connection_unref(handle)
    }

    /// Whether the connection is still up.
    public var isConnected: Bool { !closed && dbus_connection_get_is_connected(handle) != 0 }

    // MARK: - Sending

    /// Sends a message that needs no reply (a signal, a reply, a call marked no-reply).
    public func send(_ message: BusMessage) {
        guard !closed else { return }
        var serial: UInt32 = 0
        _ = dbus_connection_send(handle, message.handle, &serial)
    }

    /// Calls a method; `reply` runs on the loop with the reply or the error (an error reply, a
    /// timeout after `timeout` ms — libdbus's default of 25 s for -1 — or a lost connection).
    public func call(_ message: BusMessage, timeout: Int32 = -1,
                     reply: @escaping (Result<BusMessage, BusError>) -> Void) {
        guard !closed else { return reply(.failure(.disconnected)) }
        var pending: OpaquePointer?
        guard dbus_connection_send_with_reply(handle, message.handle, &pending, timeout) != 0 else {
            return reply(.failure(.outOfMemory))
        }
        guard let pending else { return reply(.failure(.disconnected)) }
        let box = Unmanaged.passRetained(ReplyBox(reply)).toOpaque()
        if dbus_pending_call_set_notify(pending, Self.replyArrived, box, Self.releaseReplyBox) == 0 {
            Unmanaged<ReplyBox>.fromOpaque(box).release()
            dbus_pending_call_cancel(pending)
            reply(.failure(.outOfMemory))
        }
        // libdbus keeps the pending call alive until it completes.
        dbus_pending_call_unref(pending)
    }

    /// Calls `method` on `destination` with `arguments`; `reply` gets the reply's arguments.
    public func call(_ destination: String, path: String, interface: String, method: String,
                     _ arguments: [BusValue] = [], timeout: Int32 = -1,
                     reply: @escaping (Result<[BusValue], BusError>) -> Void) {
        do {
            let message = try BusMessage.methodCall(destination: destination, path: path, interface: interface,
                                                    method: method)
            try message.append(arguments)
            call(message, timeout: timeout) { result in reply(result.map { $0.arguments() }) }
        } catch {
            reply(.failure(error))
        }
    }

    // MARK: - Receiving

    /// Asks the bus to route signals matching `rule` to us (`type='signal',interface='…'`).
    /// Fire and forget: a rule the bus refuses is only logged by libdbus.
    public func addMatch(_ rule: String) {
        guard !closed else { return }
        dbus_bus_add_match(handle, rule, nil)
    }

    /// Runs `handler` for every signal `interface.member` that reaches us (see ``addMatch(_:)``).
    public func onSignal(interface: String, member: String, _ handler: @escaping SignalHandler) {
        signalHandlers.append((interface, member, handler))
    }

    /// Serves method calls to object `path` with `handler`.
    public func export(path: String, _ handler: @escaping MethodHandler) {
        objects[path] = handler
    }

    /// Replies to `call` with `values`, or with an error (unless the caller asked for no reply).
    public func reply(to call: BusMessage, _ result: Result<[BusValue], BusError>) {
        guard call.expectsReply else { return }
        do {
            switch result {
            case let .success(values):
                let message = try call.methodReturn()
                try message.append(values)
                send(message)
            case let .failure(error):
                send(try call.errorReply(name: error.name, text: error.description))
            }
        } catch {
            if let fallback = try? call.errorReply(name: "org.freedesktop.DBus.Error.Failed", text: "\(error)") {
                send(fallback)
            }
        }
    }

    private func route(_ message: BusMessage) -> Bool {
        switch message.kind {
        case .signal:
            if message.interface == "org.freedesktop.DBus.Local", message.member == "Disconnected" {
                disconnected()
                return true
            }
            for entry in signalHandlers where entry.interface == message.interface && entry.member == message.member {
                entry.handler(message)
            }
            return false
        case .methodCall:
            guard let path = message.path, let handler = objects[path] else { return false }
            handler(message)
            return true
        default:
            return false
        }
    }

    private func disconnected() {
        guard !closed else { return }
        closed = true
        onDisconnect()
    }

    // MARK: - Hello

    private func register(_ done: @escaping (Result<String, BusError>) -> Void) {
        call("org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
             method: "Hello") { [weak self] result in
            guard let self else { return }
            switch result {
            case let .success(values):
                guard let name = values.first?.string else {
                    return done(.failure(.invalidArgument("Hello returned no name")))
                }
                // What dbus_bus_register would have recorded.
                _ = dbus_bus_set_unique_name(self.handle, name)
                self.uniqueName = name
                done(.success(name))
            case let .failure(error):
                done(.failure(error))
            }
        }
    }

    // MARK: - C side

    private final class ReplyBox {
        let reply: (Result<BusMessage, BusError>) -> Void
        init(_ reply: @escaping (Result<BusMessage, BusError>) -> Void) { self.reply = reply }
    }

    private static let replyArrived: DBusPendingCallNotifyFunction = { pending, userdata in
        guard let pending, let userdata else { return }
        // Borrowed: libdbus releases the box (releaseReplyBox) when it frees the pending call.
        let box = Unmanaged<ReplyBox>.fromOpaque(userdata).takeUnretainedValue()
        guard let raw = dbus_pending_call_steal_reply(pending) else {
            return box.reply(.failure(.disconnected))
        }
        let message = BusMessage(adopting: raw)
        if message.kind == .error {
            box.reply(.failure(.reply(name: message.errorName ?? "org.freedesktop.DBus.Error.Failed",
                                      text: message.errorText ?? "")))
        } else {
            box.reply(.success(message))
        }
    }

    private static let releaseReplyBox: DBusFreeFunction = { userdata in
        guard let userdata else { return }
        Unmanaged<ReplyBox>.fromOpaque(userdata).release()
    }

    private static let filter: DBusHandleMessageFunction = { _, message, userdata in
        guard let message, let userdata else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
        let integration = Unmanaged<LoopIntegration>.fromOpaque(userdata).takeUnretainedValue()
        let handled = integration.onMessage?(BusMessage(retaining: message)) ?? false
        return handled ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
    }

    static let releaseIntegration: DBusFreeFunction = { userdata in
        guard let userdata else { return }
        Unmanaged<LoopIntegration>.fromOpaque(userdata).release()
    }
}
