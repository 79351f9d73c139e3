/// Our own MPRIS player, published as `org.audiopolicyd.NowPlaying` (or `org.mpris.MediaPlayer2.audiopolicy`,
/// see ``NowPlayingName``): it stands for whichever app owns Now Playing, so media keys sent to it reach
/// that app and never a stale one.
///
/// It serves `/org/mpris/MediaPlayer2` with the `org.mpris.MediaPlayer2` and `.Player` interfaces and
/// `org.freedesktop.DBus.Properties` (`Get`, `GetAll`, `PropertiesChanged`). The playback methods go to
/// ``onCommand``, which forwards them to the owner; `PlaybackStatus`, `Metadata` and the `Can*`
/// capabilities mirror the owner through ``update(_:)``, which signals what changed.
public final class NowPlayingPlayer {
    /// What the player shows: the owner's state, or `Stopped` with nothing when nobody owns Now Playing.
    public struct State: Equatable, Sendable {
        public var status: MPRISPlayer.Status = .stopped
        public var metadata: [String: BusValue] = [:]
        public var canPlay = false
        public var canPause = false
        public var canGoNext = false
        public var canGoPrevious = false
        public var canSeek = false

        public init() {}
    }

    /// A forwarded method: the `Player` method's name and arguments, and where its reply goes.
    public typealias Command = (_ method: String, _ arguments: [BusValue],
                                _ reply: @escaping (Result<[BusValue], BusError>) -> Void) -> Void
    /// Reads a property of the owner's player (for `Position`, which players do not signal).
    public typealias OwnerProperty = (_ name: String, _ reply: @escaping (Result<[BusValue], BusError>) -> Void) -> Void

    public static let identity = "Now Playing (audio-policyd)"
    /// The `Player` methods forwarded to the owner.
    public static let forwarded: Set<String> = ["Play", "Pause", "PlayPause", "Stop", "Next", "Previous", "Seek",
                                                "SetPosition", "OpenUri"]

    private let bus: BusConnection
    /// The bus name it asks for.
    public let name: String
    public private(set) var state = State()
    /// Runs a forwarded `Player` method on the owner.
    public var onCommand: Command = { _, _, reply in reply(.failure(.reply(name: NowPlayingPlayer.noOwner, text: "nothing owns Now Playing"))) }
    /// Reads a property from the owner's player.
    public var ownerProperty: OwnerProperty = { _, reply in reply(.success([.variant(.int64(0))])) }
    /// Whether the name is ours (false while the bus has not answered, or when another process has it).
    public private(set) var hasName = false

    /// The error name for a command nobody can take.
    public static let noOwner = "org.mpris.MediaPlayer2.audiopolicy.Error.NoOwner"

    public init(bus: BusConnection, name: String) {
        self.bus = bus
        self.name = name
    }

    /// Serves the object and asks for the name; `done` says whether we got it.
    public func start(done: @escaping (Result<Void, BusError>) -> Void) {
        bus.export(path: MPRIS.path) { [weak self] call in self?.handle(call) }
        // DO_NOT_QUEUE (4): if another daemon has the name, say so rather than wait in line for it.
        let name = name
        bus.call("org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                 method: "RequestName", [.string(name), .uint32(4)], timeout: 5000) { [weak self] result in
            switch result {
            case let .success(values):
                // 1: primary owner; 4: already the owner.
                let code = values.first?.integer ?? 0
                self?.hasName = code == 1 || code == 4
                done(self?.hasName == true ? .success(()) : .failure(.reply(
                    name: "org.freedesktop.DBus.Error.AddressInUse", text: "\(name) belongs to another process")))
            case let .failure(error):
                done(.failure(error))
            }
        }
    }

    /// Shows `state`, signalling the properties that changed.
    public func update(_ new: State) {
        guard new != state else { return }
        let old = state
        state = new
        var changed: [String: BusValue] = [:]
        let before = Self.playerProperties(old), after = Self.playerProperties(new)
        for (key, value) in after where before[key] != value { changed[key] = value }
        guard !changed.isEmpty, hasName,
              let signal = try? BusMessage.signal(path: MPRIS.path, interface: MPRIS.propertiesInterface,
                                                  name: "PropertiesChanged"),
              (try? signal.append(.string(MPRIS.playerInterface), .properties(changed), .strings([]))) != nil
        else { return }
        bus.send(signal)
    }

    // MARK: - Properties

    static func rootProperties() -> [String: BusValue] {
        [
            "CanQuit": .boolean(false), "CanRaise": .boolean(false), "HasTrackList": .boolean(false),
            "Identity": .string(identity), "SupportedUriSchemes": .strings([]), "SupportedMimeTypes": .strings([]),
        ]
    }

    static func playerProperties(_ state: State) -> [String: BusValue] {
        [
            "PlaybackStatus": .string(state.status.rawValue),
            "Metadata": .properties(state.metadata.mapValues(\.unwrapped)),
            "Rate": .double(1), "MinimumRate": .double(1), "MaximumRate": .double(1), "Volume": .double(1),
            "CanPlay": .boolean(state.canPlay), "CanPause": .boolean(state.canPause),
            "CanGoNext": .boolean(state.canGoNext), "CanGoPrevious": .boolean(state.canGoPrevious),
            "CanSeek": .boolean(state.canSeek), "CanControl": .boolean(true),
        ]
    }

    private func properties(of interface: String) -> [String: BusValue]? {
        switch interface {
        case MPRIS.rootInterface: Self.rootProperties()
        case MPRIS.playerInterface: Self.playerProperties(state)
        default: nil
        }
    }

    // MARK: - Method calls

    private func handle(_ call: BusMessage) {
        let arguments = call.arguments()
        let reply = { [bus] (result: Result<[BusValue], BusError>) in bus.reply(to: call, result) }
        switch (call.interface, call.member) {
        case (MPRIS.propertiesInterface, "Get"):
            guard arguments.count == 2, let interface = arguments[0].string, let name = arguments[1].string else {
                return reply(.failure(.invalidArgument("Get takes (ss)")))
            }
            if interface == MPRIS.playerInterface, name == "Position" {
                return ownerProperty(name, reply)
            }
            guard let value = properties(of: interface)?[name] else {
                return reply(.failure(.reply(name: "org.freedesktop.DBus.Error.UnknownProperty",
                                             text: "no property \(name) on \(interface)")))
            }
            reply(.success([.variant(value)]))
        case (MPRIS.propertiesInterface, "GetAll"):
            guard let interface = arguments.first?.string else { return reply(.failure(.invalidArgument("GetAll takes (s)"))) }
            var values = properties(of: interface) ?? [:]
            if interface == MPRIS.playerInterface { values["Position"] = .int64(0) }
            reply(.success([.properties(values)]))
        case (MPRIS.propertiesInterface, "Set"):
            reply(.failure(.reply(name: "org.freedesktop.DBus.Error.PropertyReadOnly",
                                  text: "the Now Playing player's properties mirror its owner's and are read-only")))
        case ("org.freedesktop.DBus.Introspectable", "Introspect"):
            reply(.success([.string(Self.introspection)]))
        case (MPRIS.rootInterface, "Raise"):
            reply(.success([]))
        case (MPRIS.rootInterface, "Quit"):
            reply(.failure(.reply(name: "org.freedesktop.DBus.Error.NotSupported", text: "CanQuit is false")))
        case (MPRIS.playerInterface?, let method?) where Self.forwarded.contains(method),
             (nil, let method?) where Self.forwarded.contains(method):
            onCommand(method, arguments, reply)
        default:
            reply(.failure(.reply(name: "org.freedesktop.DBus.Error.UnknownMethod",
                                  text: "no method \(call.member ?? "?") on \(call.interface ?? "this object")")))
        }
    }

    static let introspection = Introspection.document("""
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="out"/></method>
            <method name="GetAll"><arg type="s" direction="in"/><arg type="a{sv}" direction="out"/></method>
            <method name="Set"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="in"/></method>
            <signal name="PropertiesChanged"><arg type="s"/><arg type="a{sv}"/><arg type="as"/></signal>
          </interface>
          <interface name="org.mpris.MediaPlayer2">
            <method name="Raise"/><method name="Quit"/>
            <property name="CanQuit" type="b" access="read"/>
            <property name="CanRaise" type="b" access="read"/>
            <property name="HasTrackList" type="b" access="read"/>
            <property name="Identity" type="s" access="read"/>
            <property name="SupportedUriSchemes" type="as" access="read"/>
            <property name="SupportedMimeTypes" type="as" access="read"/>
          </interface>
          <interface name="org.mpris.MediaPlayer2.Player">
            <method name="Next"/><method name="Previous"/><method name="Pause"/><method name="PlayPause"/>
            <method name="Stop"/><method name="Play"/>
            <method name="Seek"><arg name="Offset" type="x" direction="in"/></method>
            <method name="SetPosition"><arg name="TrackId" type="o" direction="in"/><arg name="Position" type="x" direction="in"/></method>
            <method name="OpenUri"><arg name="Uri" type="s" direction="in"/></method>
            <signal name="Seeked"><arg name="Position" type="x"/></signal>
            <property name="PlaybackStatus" type="s" access="read"/>
            <property name="Rate" type="d" access="read"/>
            <property name="Metadata" type="a{sv}" access="read"/>
            <property name="Volume" type="d" access="read"/>
            <property name="Position" type="x" access="read"/>
            <property name="MinimumRate" type="d" access="read"/>
            <property name="MaximumRate" type="d" access="read"/>
            <property name="CanGoNext" type="b" access="read"/>
            <property name="CanGoPrevious" type="b" access="read"/>
            <property name="CanPlay" type="b" access="read"/>
            <property name="CanPause" type="b" access="read"/>
            <property name="CanSeek" type="b" access="read"/>
            <property name="CanControl" type="b" access="read"/>
          </interface>
        """)
}
