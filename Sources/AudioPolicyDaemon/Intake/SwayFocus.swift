import AudioPolicy
import ControlProtocol
import EventLoop
import FoundationEssentials
import FoundationGaps
import Glibc
import Logging

/// Which window has focus under sway or i3, as engine focus events: the compositor's IPC socket
/// (`$SWAYSOCK`, else `$I3SOCK`), subscribed to its `window` and `workspace` events — pushed by the
/// compositor, so no polling.
///
/// Under sway this is the truth even for X11 apps: Xwayland's `DISPLAY` exists too, but its
/// `_NET_ACTIVE_WINDOW` knows nothing of Wayland windows, so the daemon prefers this source when the
/// socket answers. A window's app is its `pid` with its `app_id` (sway), or its X11 `class` (Xwayland
/// windows, and i3, which gives no pid). With no socket there is no source and the daemon runs as
/// without focus; a compositor that goes away makes focus unknown, as X11Focus does when its display
/// closes, so what focus ducked comes back.
final class SwayFocus {
    private let fd: Int32
    private var watch: MainLoop.IOWatch?
    private var buffer: [UInt8] = []
    private var reader = Reader()
    private let log: Logger
    private let feed: (Event) -> Void

    /// Connects to the compositor's socket and starts following focus; nil when there is none.
    init?(loop: MainLoop, log: Logger, environment: [String: String] = ProcessInfo.processInfo.environment,
          feed: @escaping (Event) -> Void) {
        guard let path = ["SWAYSOCK", "I3SOCK"].lazy.compactMap({ environment[$0] }).first(where: { !$0.isEmpty }) else {
            return nil
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        guard let address = try? UnixSocketAddress(path: path),
              address.withSocketAddress({ connect(fd, $0, $1) }) == 0,
              Self.send(SwayIPCMessage(type: SwayIPCMessage.subscribe, json: #"["window","workspace"]"#), on: fd),
              Self.send(SwayIPCMessage(type: SwayIPCMessage.getTree), on: fd)
        else {
            let reason = String(cString: strerror(errno))
            log.info("focus: cannot talk to the sway/i3 socket \(path) (\(reason)); focus is not followed through it")
            close(fd)
            return nil
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        self.fd = fd
        self.log = log
        self.feed = feed
        log.info("focus: following the focused window through the sway/i3 socket \(path)")
        watch = MainLoop.IOWatch(loop: loop, fd: fd, events: .readable) { [unowned self] _ in self.readMessages() }
    }

    deinit {
        watch = nil
        close(fd)
    }

    /// Writes a whole request; the socket is still blocking then, and requests are a few bytes.
    private static func send(_ message: SwayIPCMessage, on fd: Int32) -> Bool {
        let bytes = message.encoded
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            sent += count
        }
        return true
    }

    private func readMessages() {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var gone = false
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                buffer.append(contentsOf: chunk[..<count])
                continue
            }
            if count < 0, errno == EINTR { continue }
            gone = count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)
            break
        }
        do {
            for message in try SwayIPCMessage.take(from: &buffer) {
                for event in reader.events(for: message) { feed(event) }
            }
            guard gone else { return }
            log.warning("focus: sway/i3 went away; focus is unknown from now on")
        } catch {
            log.warning("focus: the sway/i3 socket sent what is not i3 IPC (\(error)); focus is unknown from now on")
        }
        watch = nil
        feed(.focusUnknown)
    }

    /// What the messages mean for focus: pure, so a recorded byte stream can be read in a test.
    struct Reader {
        /// The window that has focus, as last told: its container id and the app it was fed as.
        private(set) var focused: (id: Int, app: AppIdentity)?
        /// Every window, by container id, with its app: from the tree, then `new` and `close` events, so
        /// that an app's last window closing is known.
        private(set) var windows: [Int: AppIdentity] = [:]

        /// The engine events one message stands for (none for most).
        mutating func events(for message: SwayIPCMessage) -> [Event] {
            // Foundation's decoder traps on a text cut off at its nesting limit (see JSONNesting).
            guard !JSONNesting.isTooDeep(message.payload, limit: JSONNesting.treeLimit) else { return [] }
            let decoder = JSONDecoder()
            let data = Data(message.payload)
            switch message.type {
            case SwayIPCMessage.getTree:
                // The state when we subscribed: whatever node has focus (a window, or an empty workspace).
                guard let tree = try? decoder.decode(Node.self, from: data) else { return [] }
                for window in tree.windows { windows[window.id] = window.app }
                return [focus(tree.focusedNode.flatMap { $0.isWindow ? $0 : nil })]
            case SwayIPCMessage.windowEvent:
                guard let event = try? decoder.decode(WindowChange.self, from: data) else { return [] }
                switch event.change {
                case "new":
                    windows[event.container.id] = event.container.app
                    return []
                case "focus":
                    windows[event.container.id] = event.container.app
                    return [focus(event.container)]
                case "close":
                    return closed(event.container)
                default:
                    return []
                }
            case SwayIPCMessage.workspaceEvent:
                // A workspace with no window took focus: no window has it (no window event says so).
                guard let event = try? decoder.decode(WorkspaceChange.self, from: data), event.change == "focus",
                      let current = event.current, current.windows.isEmpty else { return [] }
                return [focus(nil)]
            default:
                return []
            }
        }

        /// A window closed: its app's last one (no other window of its process, or of its name when it has
        /// none) is told as such; otherwise only the focused window's closing matters: nothing has focus
        /// until the compositor says what does.
        private mutating func closed(_ window: Node) -> [Event] {
            let app = windows.removeValue(forKey: window.id) ?? window.app
            let wasFocused = focused?.id == window.id
            if wasFocused { focused = nil }
            let others = windows.values.contains { other in
                if let pid = app.pid { return other.pid == pid }
                return other.name != nil && other.name?.lowercased() == app.name?.lowercased()
            }
            if !others { return [.lastWindowClosed(app)] }
            return wasFocused ? [.windowClosed(app)] : []
        }

        private mutating func focus(_ window: Node?) -> Event {
            guard let window else {
                focused = nil
                return .focus(nil)
            }
            let app = window.app
            focused = (window.id, app)
            return .focus(app)
        }
    }

    /// A node of sway's or i3's tree, as much of it as focus needs.
    struct Node: Decodable {
        var id: Int
        var type: String?
        var focused: Bool?
        var pid: Int?
        var app_id: String?
        var window_properties: WindowProperties?
        var nodes: [Node]?
        var floating_nodes: [Node]?

        struct WindowProperties: Decodable {
            var `class`: String?
        }

        /// A window rather than a workspace, an output or a split container.
        var isWindow: Bool {
            (type == "con" || type == "floating_con") && (pid != nil || app_id != nil || window_properties != nil)
        }

        /// The windows under this node, at any depth.
        var windows: [Node] {
            children.flatMap { $0.isWindow ? [$0] + $0.windows : $0.windows }
        }

        private var children: [Node] { (nodes ?? []) + (floating_nodes ?? []) }

        /// The node with focus at any depth, each node looked at once. (`children.lazy.compactMap(…).first`
        /// computed each child's answer twice, once to find the first and once to return it: 2^depth
        /// visits, and a 150-deep tree never finished.)
        var focusedNode: Node? {
            if focused == true { return self }
            for child in children {
                if let found = child.focusedNode { return found }
            }
            return nil
        }

        /// The window's app: its process (named by its app id or X11 class), else the name alone, else
        /// the window itself (an app we know nothing of has focus, so none we know has).
        var app: AppIdentity {
            let name = [app_id, window_properties?.class].lazy.compactMap { $0 }.first { !$0.isEmpty }
            if let pid, pid > 0 { return AppIdentity(process: pid, name: name) }
            return AppIdentity(name: name ?? "sway-window-\(id)")
        }
    }

    struct WindowChange: Decodable {
        var change: String
        var container: Node
    }

    struct WorkspaceChange: Decodable {
        var change: String
        var current: Node?
    }
}
