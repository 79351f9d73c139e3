import Foundation
import SessionBus

/// The private session bus scripts/sound-server starts, and the real MPRIS clients the tests use.
enum SessionBus {
    /// `DBUS_SESSION_BUS_ADDRESS`, unless it is the placeholder that names no bus.
    static let address: String? = TestEnvironment.variables["DBUS_SESSION_BUS_ADDRESS"].flatMap {
        $0.isEmpty || $0.hasSuffix("/no-session-bus") ? nil : $0
    }

    /// The mpv-mpris plugin: `MPV_MPRIS_PLUGIN`, else where Debian puts it.
    static let mprisPlugin: String? = {
        let candidates = [TestEnvironment.variables["MPV_MPRIS_PLUGIN"], "/usr/lib/mpv-mpris/mpris.so",
                          "/usr/lib/x86_64-linux-gnu/mpv-mpris/mpris.so", "/etc/mpv/scripts/mpris.so"]
        return candidates.compactMap { $0 }.first { FileManager.default.fileExists(atPath: $0) }
    }()

    static func installed(_ program: String) -> Bool {
        (TestEnvironment.variables["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(program)") }
    }

    /// Why the MPRIS suite cannot run here, or nil when it can.
    static let missing: String? = {
        if TestEnvironment.soundServer == nil { return "no sound server: run scripts/test" }
        if address == nil { return "no private session bus (DBUS_SESSION_BUS_ADDRESS): run scripts/test" }
        for program in ["mpv", "playerctl", "dbus-send"] where !installed(program) {
            return "\(program) is not installed (scripts/test installs it)"
        }
        if mprisPlugin == nil { return "the mpv-mpris plugin is not installed (Debian: mpv-mpris)" }
        return nil
    }()

    /// The pid behind a bus name (`GetConnectionUnixProcessID`), nil if nobody owns it.
    static func pid(of name: String) -> Int32? {
        guard let reply = try? run("dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus",
                                   "/org/freedesktop/DBus", "org.freedesktop.DBus.GetConnectionUnixProcessID",
                                   "string:\(name)", timeout: 5) else { return nil }
        return reply.split(separator: "\n").last.flatMap { $0.split(separator: " ").last }.flatMap { Int32($0) }
    }

    /// `playerctl -p NAME ARGUMENTS...`, its output trimmed.
    @discardableResult
    static func playerctl(_ player: String, _ arguments: String...) throws -> String {
        try run(["playerctl", "-p", player] + arguments, timeout: 5).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// A real MPRIS player: mpv with the mpv-mpris plugin, playing a tone through the test server, looped.
/// `playerctl --follow` wakes the tests' waits on each status change. `deinit` kills both.
final class MPV {
    /// The name playerctl knows it by (`mpv`, or `mpv.instance1234` for a second mpv).
    private(set) var name = ""
    private let child: Child
    private let changes: Changes
    private var follower: Child?
    private var followed: LineLog?
    /// The sink input, once seen.
    private(set) var index: UInt32?

    /// The sandbox it runs in, if any (its pid on the server is then the sandbox's, 2).
    private let sandbox: FlatpakSandbox?

    /// Starts mpv on `tone` and waits until its MPRIS name is on the bus. `scripts` are more mpv
    /// scripts, `options` their `--script-opts`; in `sandbox`, it runs as a Flatpak app would.
    init(_ tone: Tone, scripts: [String] = [], options: [String] = [], arguments extra: [String] = [],
         sandbox: FlatpakSandbox? = nil, changes: Changes) throws {
        self.sandbox = sandbox
        self.changes = changes
        guard let plugin = SessionBus.mprisPlugin else { throw CommandFailure(description: "no mpv-mpris plugin") }
        var arguments = ["mpv", "--no-config", "--load-scripts=no", "--script=\(plugin)", "--no-video", "--ao=pulse",
                         "--no-terminal", "--loop-file=inf"]
        arguments += scripts.map { "--script=\($0)" }
        if !options.isEmpty { arguments.append("--script-opts=" + options.joined(separator: ",")) }
        arguments += extra
        let file = try tone.file().path
        arguments.append(file)
        child = try Child(try sandbox?.command(arguments, files: [file] + scripts) ?? arguments)
        let pid = child.pid
        // A sandboxed mpv's name is owned by its bus proxy.
        let owns: (Int32?) -> Bool = { owner in owner.map { sandbox?.isProxy($0) ?? ($0 == pid) } ?? false }
        name = try changes.await("mpv (pid \(pid)) to own an MPRIS name", timeout: 10) { () throws -> Probe<String> in
            if let code = child.exitCode { throw CommandFailure(description: "mpv exited with \(code)") }
            let names = (try? run("playerctl", "-l", timeout: 5))?.split(separator: "\n").map(String.init) ?? []
            if let mine = names.first(where: { $0.hasPrefix("mpv") && owns(SessionBus.pid(of: "org.mpris.MediaPlayer2.\($0)")) }) {
                return .done(mine)
            }
            return .waiting("players: \(names)")
        }
        let pipe = Pipe()
        follower = try Child(["playerctl", "-p", name, "--follow", "status"], standardOutput: pipe)
        followed = LineLog(reading: pipe, changes: changes)
    }

    deinit {
        follower?.kill()
        child.kill()
    }

    var pid: Int32 { child.pid }
    var busName: String { "org.mpris.MediaPlayer2.\(name)" }

    /// `playerctl status`: `Playing`, `Paused` or `Stopped`.
    func status() throws -> String { try SessionBus.playerctl(name, "status") }

    /// Waits until playerctl reports `wanted`.
    func awaitStatus(_ wanted: String, timeout: Double = 5) throws {
        try changes.await("\(name) to be \(wanted) (playerctl status)", timeout: timeout) { () throws -> Probe<Void> in
            let now = try status()
            return now == wanted ? .done(()) : .waiting(now)
        }
    }

    /// Waits for mpv's sink input and returns it.
    @discardableResult
    func awaitStream(timeout: Double = 10) throws -> ServerStream {
        let stream = try SoundServer.awaitStream(of: child, pid: sandbox == nil ? nil : FlatpakSandbox.appPID, name: "mpv",
                                                 changes: changes, timeout: timeout)
        index = stream.index
        return stream
    }

    /// The stream as the server reports it now.
    func stream() throws -> ServerStream {
        try SoundServer.current(index, of: "mpv")
    }

    /// Kills mpv, as a crash would.
    func kill() { child.kill() }
}
