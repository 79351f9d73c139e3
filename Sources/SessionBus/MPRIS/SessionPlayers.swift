import EventLoop

/// The MPRIS players on the session bus, followed live.
///
/// At start it lists the `org.mpris.MediaPlayer2.*` names; afterwards `NameOwnerChanged` tells it of
/// players that come and go, and `PropertiesChanged` of what they do. A new player is announced
/// (``onAppear``) once its process id and its `Player` and root properties are in, so the daemon can
/// map it to streams straight away. Tracking only: acting on players is ``call(_:method:_:reply:)``'s,
/// at the daemon's request.
public final class SessionPlayers {
    private let bus: BusConnection
    /// Announced players, by well-known name.
    public private(set) var players: [String: MPRISPlayer] = [:]
    /// Players whose details are still being fetched, by well-known name.
    private var loading: [String: (player: MPRISPlayer, waiting: Int)] = [:]
    /// Properties asked again of players that took their name before exporting their object, by
    /// well-known name and interface: the timer of the next try, and how many were made.
    private var lateFetches: [String: (timer: MainLoop.Timer, tries: Int)] = [:]

    /// The first wait before asking a player again for properties it did not have yet (µs), doubled
    /// with each try: Firefox takes its `org.mpris.MediaPlayer2.firefox.instance_…` name a moment before
    /// it exports `/org/mpris/MediaPlayer2`, so a `GetAll` sent as the name appears can fail with
    /// `UnknownMethod` ("Object does not exist"); the player then says Playing and never changes again
    /// (a loaded machine: its page's `<audio>` stream stayed ambient in 3 of 26 runs beside two CPU hogs).
    public static let lateFetchWait: UInt64 = 50_000
    /// Tries before giving up: the last waits 3.2 s, 6.35 s after the first failure, within the 8 s in
    /// which what a player says still makes a stream media.
    public static let lateFetchTries = 7

    /// A player is on the bus and its details are known.
    public var onAppear: (MPRISPlayer) -> Void = { _ in }
    /// A known player changed (`PlaybackStatus`, `Metadata`, capabilities); with the previous snapshot.
    public var onChange: (_ player: MPRISPlayer, _ before: MPRISPlayer) -> Void = { _, _ in }
    /// A player left the bus (its app quit, or gave up the name).
    public var onGone: (MPRISPlayer) -> Void = { _ in }
    /// Something could not be asked: for the log.
    public var onProblem: (String) -> Void = { _ in }

    /// Tries of a fetch that found no object yet (``lateFetchTries``; a test's control makes none).
    private let lateTries: Int

    public init(bus: BusConnection, lateFetchTries: Int = SessionPlayers.lateFetchTries) {
        self.bus = bus
        lateTries = lateFetchTries
    }

    /// Subscribes to the signals and lists the players already there. Call once the bus has
    /// answered `Hello` (so that our own player can be told apart by its owner).
    public func start() {
        bus.addMatch("type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
            + "member='NameOwnerChanged',arg0namespace='org.mpris.MediaPlayer2'")
        bus.addMatch("type='signal',interface='\(MPRIS.propertiesInterface)',member='PropertiesChanged',"
            + "path='\(MPRIS.path)'")
        bus.onSignal(interface: "org.freedesktop.DBus", member: "NameOwnerChanged") { [weak self] message in
            self?.nameOwnerChanged(message.arguments())
        }
        bus.onSignal(interface: MPRIS.propertiesInterface, member: "PropertiesChanged") { [weak self] message in
            guard message.path == MPRIS.path, let sender = message.sender else { return }
            self?.propertiesChanged(from: sender, message.arguments())
        }
        callBus("ListNames") { [weak self] values in
            guard let self, let names = values.first?.strings else { return }
            for name in names.sorted() where name.hasPrefix(MPRIS.namePrefix) {
                self.callBus("GetNameOwner", [.string(name)]) { [weak self] values in
                    guard let owner = values.first?.string else { return }
                    self?.appeared(name, owner: owner)
                }
            }
        }
    }

    /// The announced player that `owner` (a unique name) owns under `busName`, if any.
    public func player(named busName: String) -> MPRISPlayer? { players[busName] }

    /// Calls an `org.mpris.MediaPlayer2.Player` method (`Pause`, `Play`, `Stop`, `PlayPause`, `Next`…)
    /// on a player.
    public func call(_ busName: String, method: String, _ arguments: [BusValue] = [],
                     reply: @escaping (Result<[BusValue], BusError>) -> Void = { _ in }) {
        bus.call(busName, path: MPRIS.path, interface: MPRIS.playerInterface, method: method, arguments,
                 timeout: 5000, reply: reply)
    }

    // MARK: - Names

    private func nameOwnerChanged(_ arguments: [BusValue]) {
        guard arguments.count == 3, let name = arguments[0].string, name.hasPrefix(MPRIS.namePrefix),
              let newOwner = arguments[2].string else { return }
        loading[name] = nil
        for interface in [MPRIS.playerInterface, MPRIS.rootInterface] { lateFetches[Self.fetchID(name, interface)] = nil }
        if let gone = players.removeValue(forKey: name) { onGone(gone) }
        if !newOwner.isEmpty { appeared(name, owner: newOwner) }
    }

    private func appeared(_ name: String, owner: String) {
        // Our own Now Playing player in the MPRIS namespace (or another daemon's) and playerctld are not
        // players to pause or map: they mirror others. (Our default name is outside the namespace.)
        guard !MPRIS.isProxy(name), owner != bus.uniqueName, players[name] == nil, loading[name] == nil else { return }
        loading[name] = (MPRISPlayer(busName: name, owner: owner), 3)
        bus.call("org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                 method: "GetConnectionUnixProcessID", [.string(owner)], timeout: 5000) { [weak self] result in
            if case let .failure(error) = result { self?.onProblem("\(name): GetConnectionUnixProcessID: \(error)") }
            self?.loaded(name, owner: owner) { player in
                guard let pid = (try? result.get())?.first?.integer.flatMap({ Int32(exactly: $0) }) else { return }
                player.pid = pid
                player.appID = Sandbox.appID(of: pid)
            }
        }
        for interface in [MPRIS.playerInterface, MPRIS.rootInterface] {
            getAll(name, interface) { [weak self] result in
                if case let .failure(error) = result {
                    self?.onProblem("\(name): GetAll \(interface): \(error)")
                    if Self.isNotExportedYet(error) { self?.fetchLater(name, owner: owner, interface: interface) }
                }
                let properties = (try? result.get()) ?? [:]
                self?.loaded(name, owner: owner) { player in player.apply(properties) }
            }
        }
    }

    /// One of a new player's three answers is in (or failed); the player is announced after the last.
    private func loaded(_ name: String, owner: String, _ update: (inout MPRISPlayer) -> Void) {
        guard var entry = loading[name], entry.player.owner == owner else { return }
        update(&entry.player)
        entry.waiting -= 1
        guard entry.waiting == 0 else {
            loading[name] = entry
            return
        }
        loading[name] = nil
        players[name] = entry.player
        onAppear(entry.player)
    }

    // MARK: - Properties

    private func propertiesChanged(from sender: String, _ arguments: [BusValue]) {
        guard arguments.count >= 2, let interface = arguments[0].string,
              interface == MPRIS.playerInterface || interface == MPRIS.rootInterface,
              let changed = arguments[1].stringDictionary else { return }
        let invalidated = arguments.count > 2 ? arguments[2].strings ?? [] : []
        for name in loading.keys.sorted() where loading[name]?.player.owner == sender {
            loading[name]?.player.apply(changed)
        }
        for name in players.keys.sorted() where players[name]?.owner == sender {
            update(name) { $0.apply(changed) }
            if !invalidated.isEmpty { refetch(name, interface: interface) }
        }
    }

    private func refetch(_ name: String, interface: String) {
        getAll(name, interface) { [weak self] result in
            guard let properties = try? result.get() else { return }
            self?.update(name) { $0.apply(properties) }
        }
    }

    /// Asks player `name` for all of `interface`'s properties.
    private func getAll(_ name: String, _ interface: String,
                        reply: @escaping (Result<[String: BusValue], BusError>) -> Void) {
        bus.call(name, path: MPRIS.path, interface: MPRIS.propertiesInterface, method: "GetAll",
                 [.string(interface)], timeout: 5000) { result in
            reply(result.map { $0.first?.stringDictionary ?? [:] })
        }
    }

    // MARK: - A player's object exported late

    /// Whether a failed `GetAll` says the object is not there (yet), rather than the player refusing.
    static func isNotExportedYet(_ error: BusError) -> Bool {
        guard case let .reply(name, _) = error else { return false }
        return ["org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.UnknownObject",
                "org.freedesktop.DBus.Error.UnknownInterface"].contains(name)
    }

    /// Asks `name` (owned by `owner`) for `interface`'s properties again after a wait, doubling the wait
    /// with each try while the object is still missing: a timer only while a fetch is owed.
    private func fetchLater(_ name: String, owner: String, interface: String) {
        let id = Self.fetchID(name, interface)
        let tries = (lateFetches[id]?.tries ?? 0) + 1
        guard tries <= lateTries else {
            lateFetches[id] = nil
            return
        }
        let timer = lateFetches[id]?.timer ?? MainLoop.Timer(loop: bus.loop) { [weak self] in
            self?.fetchAgain(name, owner: owner, interface: interface)
        }
        lateFetches[id] = (timer, tries)
        timer.schedule(after: Self.lateFetchWait << UInt64(tries - 1))
    }

    private func fetchAgain(_ name: String, owner: String, interface: String) {
        let id = Self.fetchID(name, interface)
        getAll(name, interface) { [weak self] result in
            guard let self, self.lateFetches[id] != nil else { return }
            switch result {
            case let .success(properties):
                self.lateFetches[id] = nil
                self.onProblem("\(name): GetAll \(interface) answered on a later try")
                if self.loading[name]?.player.owner == owner {
                    self.loading[name]?.player.apply(properties)
                } else if self.players[name]?.owner == owner {
                    self.update(name) { $0.apply(properties) }
                }
            case let .failure(error):
                if Self.isNotExportedYet(error) {
                    self.fetchLater(name, owner: owner, interface: interface)
                } else {
                    self.lateFetches[id] = nil
                }
            }
        }
    }

    /// The key of a fetch owed in ``lateFetches``.
    private static func fetchID(_ name: String, _ interface: String) -> String { name + " " + interface }

    private func update(_ name: String, _ change: (inout MPRISPlayer) -> Bool) {
        guard var player = players[name] else { return }
        let before = player
        guard change(&player) else { return }
        players[name] = player
        onChange(player, before)
    }

    // MARK: - The bus

    private func callBus(_ method: String, _ arguments: [BusValue] = [],
                         reply: @escaping ([BusValue]) -> Void) {
        bus.call("org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                 method: method, arguments, timeout: 5000) { [weak self] result in
            switch result {
            case let .success(values): reply(values)
            case let .failure(error): self?.onProblem("\(method): \(error)")
            }
        }
    }
}
