import EventLoop
import Foundation
import SessionBus
import Testing
import TestRequirements

// The D-Bus wrapper on the private session bus scripts/sound-server starts: libdbus driven by our
// MainLoop (watches, timeouts, dispatch), asynchronous calls, signals, an exported object.

@Suite(
    "MPRIS: the D-Bus connection on a real session bus",
    .serialized,
    .needs(SessionBus.address == nil ? "no private session bus (DBUS_SESSION_BUS_ADDRESS): run scripts/test" : nil)
)
final class MPRISBusTests {
    let loop = MainLoop()

    /// Runs the loop until `condition` holds; false when `timeout` (µs) passed first. A child process
    /// exiting does not wake the loop, so the condition is also looked at every 20 ms.
    private func runLoop(timeout: UInt64 = 5_000_000, until condition: () -> Bool) -> Bool {
        var expired = false
        let deadline = MainLoop.Timer(loop: loop) { expired = true }
        deadline.schedule(after: timeout)
        var recheck: MainLoop.Timer?
        recheck = MainLoop.Timer(loop: loop) { recheck?.schedule(after: 20_000) }
        recheck?.schedule(after: 20_000)
        defer { recheck = nil }
        while !condition(), !expired {
            guard loop.iterate() else { return false }
        }
        return condition()
    }

    private func connect() throws -> (BusConnection, String) {
        var registered: Result<String, BusError>?
        let bus = try BusConnection(loop: loop, address: try #require(SessionBus.address)) { registered = $0 }
        try #require(runLoop { registered != nil }, "Hello was not answered")
        return (bus, try #require(try registered?.get()))
    }

    @Test("Hello, a call with its reply, an error reply, all without blocking the loop")
    func callsAndReplies() throws {
        let (bus, name) = try connect()
        #expect(name.hasPrefix(":1."))
        var names: [String]?
        bus.call("org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                 method: "ListNames") { names = (try? $0.get())?.first?.strings }
        try #require(runLoop { names != nil })
        #expect(names?.contains(name) == true, "our own name is not listed: \(names ?? [])")

        var failure: BusError?
        bus.call("org.example.Nobody", path: "/", interface: "org.example.Nobody", method: "Ping") { result in
            if case let .failure(error) = result { failure = error }
        }
        try #require(runLoop { failure != nil })
        #expect(failure?.name == "org.freedesktop.DBus.Error.ServiceUnknown", "\(String(describing: failure))")
    }

    @Test("a signal we subscribed to arrives with its arguments")
    func signals() throws {
        let (bus, _) = try connect()
        bus.addMatch("type='signal',interface='org.example.Test',member='Hello'")
        var received: [BusValue]?
        bus.onSignal(interface: "org.example.Test", member: "Hello") { received = $0.arguments() }
        let signal = try BusMessage.signal(path: "/org/example", interface: "org.example.Test", name: "Hello")
        let sent: [BusValue] = [.properties(["n": .int32(5)]), .strings(["a", "b"])]
        try signal.append(sent)
        bus.send(signal)
        try #require(runLoop { received != nil })
        #expect(received == sent)
    }

    @Test("an exported object answers another process's call (dbus-send) while the loop runs")
    func exportedObject() throws {
        let (bus, name) = try connect()
        bus.export(path: "/org/example/Echo") { call in
            bus.reply(to: call, .success([.string("echo: " + (call.arguments().first?.string ?? "?"))]))
        }
        let output = Pipe()
        let sender = try Child(["dbus-send", "--session", "--print-reply", "--dest=\(name)", "/org/example/Echo",
                                "org.example.Echo.Say", "string:hi"], standardOutput: output)
        try #require(runLoop { !sender.isRunning }, "dbus-send got no reply")
        #expect(sender.exitCode == 0)
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(text.contains("\"echo: hi\""), "\(text)")

        // A path nobody serves gets libdbus's UnknownMethod error, not silence.
        let errors = Pipe()
        let unknown = try Child(["dbus-send", "--session", "--print-reply", "--dest=\(name)", "/org/example/Nothing",
                                 "org.example.Echo.Say"], standardError: errors)
        try #require(runLoop { !unknown.isRunning })
        #expect(unknown.exitCode != 0)
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(message.contains("UnknownMethod") || message.contains("UnknownObject"), "\(message)")
    }

    @Test("a player that takes its name before exporting its object (as Firefox does) is asked again: Playing, with its title")
    func playerExportedLate() throws {
        let player = try lateObject(tries: SessionPlayers.lateFetchTries)
        #expect(player?.status == .playing && player?.title == "A song", "\(String(describing: player))")
    }

    @Test("control: asked only once, that player stays without a status")
    func playerExportedLateAskedOnce() throws {
        let player = try lateObject(tries: 0)
        #expect(player != nil && player?.status == nil, "\(String(describing: player))")
    }

    /// Follows the players while `Tests/RealApps/bin/late-player` takes its name and exports its object
    /// 300 ms later; what is known of it once it says Playing, or 2 s after it appeared (nil: never
    /// announced). Asked again, it says Playing 0.35–0.75 s after it appeared (the tries' waits double
    /// from 50 ms); the control's 2 s is well past that.
    private func lateObject(tries: Int) throws -> MPRISPlayer? {
        let (bus, _) = try connect()
        let players = SessionPlayers(bus: bus, lateFetchTries: tries)
        players.start()
        let name = "lateplayer\(getpid())"
        let launcher = TestEnvironment.packageRoot.appendingPathComponent("Tests/RealApps/bin/late-player").path
        let child = try Child([launcher, name, "300"])
        defer { child.kill() }
        let busName = "org.mpris.MediaPlayer2." + name
        try #require(runLoop { players.player(named: busName) != nil }, "the player was never announced")
        _ = runLoop(timeout: 2_000_000) { players.player(named: busName)?.status == .playing }
        return players.player(named: busName)
    }

    @Test("closing the connection releases it: the bus forgets our name")
    func closing() throws {
        var (bus, name): (BusConnection?, String) = try connect()
        _ = bus
        bus = nil
        let (other, _) = try connect()
        var owned: Bool?
        other.call("org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                   method: "NameHasOwner", [.string(name)]) { owned = (try? $0.get())?.first?.bool }
        try #require(runLoop { owned != nil })
        #expect(owned == false)
    }
}
