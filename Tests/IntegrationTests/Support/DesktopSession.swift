import Foundation

/// A private desktop session for a compositor under test (GNOME Shell, KWin): a folder with its runtime
/// folder (`XDG_RUNTIME_DIR`) and `HOME`, a session bus of its own (and a stand-in system bus, for a
/// shell that asks logind), and the processes started in it. `deinit` stops them, and ends whatever they
/// started that outlived them (at-spi's bus, dconf-service…): every process with the session's folder in
/// its environment.
final class DesktopSession {
    let folder: URL
    let runtime: URL
    let home: URL
    let environment: [String: String]
    private var children: [Child] = []
    private let changes: Changes

    init(_ prefix: String, systemBus: Bool = false, changes: Changes) throws {
        self.changes = changes
        folder = try TestEnvironment.temporaryFolder(prefix)
        runtime = folder.appendingPathComponent("run")
        home = folder.appendingPathComponent("home")
        for made in [runtime, home] {
            try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        var environment = [
            "PATH": TestEnvironment.variables["PATH"] ?? "/usr/bin:/bin", "HOME": home.path, "XDG_RUNTIME_DIR": runtime.path,
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(runtime.path)/bus",
        ]
        if systemBus { environment["DBUS_SYSTEM_BUS_ADDRESS"] = "unix:path=\(folder.path)/system-bus" }
        self.environment = environment
        let sockets = [runtime.path + "/bus"] + (systemBus ? [folder.path + "/system-bus"] : [])
        for socket in sockets {
            children.append(try Child(["dbus-daemon", "--session", "--nofork", "--address=unix:path=\(socket)"],
                                      environment: environment))
        }
        try changes.await("the session's buses", timeout: 10) { () -> Probe<Void> in
            sockets.allSatisfy { FileManager.default.fileExists(atPath: $0) } ? .done(()) : .waiting("no sockets yet")
        }
    }

    deinit {
        for child in children.reversed() { child.stop() }
        let marker = Array(folder.path.utf8)
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), pid != getpid(),
                  let environ = FileManager.default.contents(atPath: "/proc/\(entry)/environ"),
                  environ.split(separator: 0).contains(where: { $0.contains(marker) }) else { continue }
            kill(pid, SIGKILL)
        }
        try? FileManager.default.removeItem(at: folder)
    }

    /// The session's session bus, for a daemon that must share it.
    var sessionBus: String { environment["DBUS_SESSION_BUS_ADDRESS"] ?? "" }

    /// Starts `arguments` in the session (the compositor); `extra` adds to the session's environment.
    @discardableResult
    func start(_ arguments: [String], extra: [String: String] = [:]) throws -> Child {
        let child = try Child(arguments, environment: environment.merging(extra) { _, new in new }, defaultSignals: true)
        children.append(child)
        return child
    }

    /// Runs a command in the session (its bus, its HOME) and returns what it printed; throws unless it succeeds.
    @discardableResult
    func run(_ arguments: [String]) throws -> String {
        let result = try outcome(arguments, environment: environment)
        guard result.code == 0 else { throw CommandFailure(description: "\(arguments.joined(separator: " ")): \(result)") }
        return result.output
    }

    /// A Wayland client's environment on the compositor's socket `name`: ours, with no X display to fall back on.
    func clientEnvironment(wayland name: String) -> [String: String] {
        var client = TestEnvironment.variables
        client["WAYLAND_DISPLAY"] = runtime.appendingPathComponent(name).path
        client["DISPLAY"] = nil
        return client
    }
}
