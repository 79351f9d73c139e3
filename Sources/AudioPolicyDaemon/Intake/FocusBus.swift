import AudioPolicy
import Logging
import SessionBus

/// Focus told over the session bus: `org.audiopolicyd.Focus.Activated(pid, appId)` on the bus name
/// `org.audiopolicyd.Focus`, object `/org/audiopolicyd/Focus`, fed to the engine as the control
/// socket's `focus` op is; `LastWindowClosed(pid, appId)` when the last window of a process closed
/// (the op's `lastWindowClosed`).
///
/// It exists for KDE Plasma on Wayland: KWin knows which window is active, but a KWin script can
/// neither open a socket nor run a command — its one way out is `callDBus` (desktop/kwin/). A pid of 0
/// and an empty app id mean no window has focus. The pid may come as any D-Bus integer, a double (a
/// JavaScript number) or a string, since scripts do not choose the type their numbers are sent as.
final class FocusBus {
    static let name = "org.audiopolicyd.Focus"
    static let path = "/org/audiopolicyd/Focus"
    static let interface = "org.audiopolicyd.Focus"

    private let log: Logger
    private let feed: (Event) -> Void

    init(log: Logger, feed: @escaping (Event) -> Void) {
        self.log = log
        self.feed = feed
    }

    /// Serves the object on a new bus connection and asks for the name (nil: the bus went away).
    func busChanged(_ bus: BusConnection?) {
        guard let bus else { return }
        bus.export(path: Self.path) { [weak self, unowned bus] call in self?.handle(call, on: bus) }
        let log = log
        // DO_NOT_QUEUE (4): a second daemon says so instead of waiting in line.
        bus.call("org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                 method: "RequestName", [.string(Self.name), .uint32(4)], timeout: 5000) { result in
            switch result {
            case let .success(values) where [1, 4].contains(values.first?.integer ?? 0):
                log.info("focus: desktop scripts can tell focus on the session bus as \(Self.name)")
            case .success:
                log.info("focus: \(Self.name) belongs to another process; desktop scripts reach that one")
            case let .failure(error):
                log.info("focus: cannot own \(Self.name) (\(error))")
            }
        }
    }

    private func handle(_ call: BusMessage, on bus: BusConnection) {
        switch (call.interface, call.member) {
        case (Self.interface?, "Activated"), (nil, "Activated"):
            guard let event = Self.event(activated: call.arguments()) else {
                return bus.reply(to: call, .failure(.invalidArgument("Activated takes (pid, appId): a number and a string")))
            }
            feed(event)
            bus.reply(to: call, .success([]))
        case (Self.interface?, "LastWindowClosed"), (nil, "LastWindowClosed"):
            guard case let .focus(app?)? = Self.event(activated: call.arguments()) else {
                return bus.reply(to: call, .failure(.invalidArgument(
                    "LastWindowClosed takes (pid, appId): a number and a string, not both empty")))
            }
            feed(.lastWindowClosed(app))
            bus.reply(to: call, .success([]))
        case ("org.freedesktop.DBus.Introspectable", "Introspect"):
            bus.reply(to: call, .success([.string(Self.introspection)]))
        default:
            bus.reply(to: call, .failure(.reply(name: "org.freedesktop.DBus.Error.UnknownMethod",
                                                text: "no method \(call.member ?? "?") on \(call.interface ?? Self.path)")))
        }
    }

    /// The focus event `Activated`'s arguments stand for; nil when they are not (number, string).
    /// `LastWindowClosed` reads its arguments the same way.
    static func event(activated arguments: [BusValue]) -> Event? {
        guard arguments.count == 2, let appID = arguments[1].string else { return nil }
        let pid: Int64?
        switch arguments[0].unwrapped {
        case let .double(value): pid = value.isFinite && value.rounded() == value ? Int64(exactly: value) : nil
        case let .string(text): pid = Int64(text)
        case let other: pid = other.integer
        }
        guard let pid, pid >= 0, pid <= Int64(Int32.max) else { return nil }
        if pid > 0 { return .focus(AppIdentity(process: Int(pid), name: appID.isEmpty ? nil : appID)) }
        return .focus(appID.isEmpty ? nil : AppIdentity(name: appID))
    }

    static let introspection = Introspection.document("""
          <interface name="org.audiopolicyd.Focus">
            <method name="Activated"><arg name="pid" type="v" direction="in"/><arg name="appId" type="s" direction="in"/></method>
            <method name="LastWindowClosed"><arg name="pid" type="v" direction="in"/><arg name="appId" type="s" direction="in"/></method>
          </interface>
        """)
}
