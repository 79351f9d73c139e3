import AudioPolicy
import AudioPolicyDaemon
import Foundation
import Testing
import TestRequirements

// The daemon as a desktop service: systemd's readiness protocol and `top`, on the real sound server
// (scripts/sound-server), with the built binary. Installing (make install) and the unit file need no
// server: ServiceInstallTests.

@Suite(
    "Service: systemd notification and the top view",
    .serialized,
    .needs(TestEnvironment.soundServerMissing)
)
final class ServiceTests {
    let session: LiveSession
    let folder: URL

    init() throws {
        session = try LiveSession()
        folder = try TestEnvironment.temporaryFolder("audio-policyd-service")
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    @Test("READY=1 arrives once the daemon has connected and put back what a crash left; STOPPING=1 on SIGTERM",
          arguments: ["path", "abstract"])
    func notifiesSystemd(_ kind: String) throws {
        let address = kind == "path" ? folder.appendingPathComponent("notify").path
            : "@audio-policyd-itest-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let listener = try NotifyListener(address: address)

        // What a crash leaves: the music ducked on the server, its own volume in the journal.
        let (music, own) = try session.startMusic()
        let state = folder.appendingPathComponent("state-\(kind)")
        let ducked = DaemonTests.volume(own, at: -20)
        try SoundServer.setVolume(try #require(music.index), raw: ducked.raw)
        try session.awaitStream(music, "ducked by hand") { DaemonTests.matches($0.volume, ducked) }
        let stream = try music.stream()
        try FileManager.default.createDirectory(at: state.appendingPathComponent("audio-policyd"),
                                                withIntermediateDirectories: true)
        try JournalStore(path: journalPath(in: state)).save([JournalEntry(
            sinkInput: stream.index, restoreID: stream.properties["module-stream-restore.id"],
            application: stream.applicationName, pid: stream.pid.map(Int.init), volume: own.raw,
            channelMap: [1, 2], muted: false)])

        let daemon = try session.startDaemon(stateHome: state, environment: ["NOTIFY_SOCKET": address])
        let ready = try listener.receive()
        // The moment READY=1 is sent, the server already has the music back at its own volume.
        let atReady = try music.stream()
        #expect(ready.split(separator: "\n").contains("READY=1"), "\(ready)")
        #expect(ready.contains("STATUS=connected to"), "\(ready)")
        #expect(DaemonTests.matches(atReady.volume, own), "READY=1 before the music was restored: \(atReady)")
        #expect(JournalStore(path: journalPath(in: state)).load(setAside: false) == .empty)

        #expect(daemon.terminate() == 0)
        #expect(try listener.receive() == "STOPPING=1")
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    @Test("top under tmux shows the streams, the duck and the decision, and q restores the terminal")
    func topUnderTmux() throws {
        let (music, _) = try session.startMusic()
        let daemon = try session.startDaemon()
        let prompt = try session.play(.long, role: "navigation", name: "navigation-app")
        try session.awaitStatus(daemon, "the music ducked") { status in
            status.streams.contains { $0.index == music.index && $0.state == .ducked }
        }
        let tmux = try Tmux(columns: 130, rows: 30)
        try tmux.start("echo BEFORE-TOP; \(TestEnvironment.daemonBinary) top --socket \(daemon.socketPath); "
            + "echo \"AFTER-TOP rc=$?\"; stty -a | tr ' ;' '\\n\\n' | grep -x -e '-\\?icanon' -e '-\\?echo'")
        let screen = try tmux.await("top to show both streams, the duck and its decision") { text in
            text.contains("music-app") && text.contains("navigation-app") && text.contains("ducked")
                && text.contains("-20 dB") && text.contains("last decisions") && text.contains("interrupted by class navigation")
        }
        #expect(screen.contains("now playing:"), "\(screen)")
        #expect(try tmux.alternateScreen(), "top is not on the alternate screen")
        // It follows what happens: the prompt ends, the music is restored on the screen too.
        prompt.stop()
        try tmux.await("top to show the music restored") { text in
            // The stream table only: the decisions below it still name the prompt (its audible and
            // silent reports, the duck it caused).
            let table = text.components(separatedBy: "last decisions")[0].split(separator: "\n")
            return table.contains { $0.contains("music-app") && $0.contains("playing") }
                && !table.contains { $0.contains("navigation-app") }
        }

        try tmux.send("q")
        let after = try tmux.await("top to quit and the shell to go on") { $0.contains("AFTER-TOP rc=") && $0.contains("echo") }
        #expect(after.contains("BEFORE-TOP"), "the primary screen is not back:\n\(after)")
        #expect(after.contains("AFTER-TOP rc=0"), "\(after)")
        #expect(!after.contains("music-app"), "top's screen was left behind:\n\(after)")
        let modes = after.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(modes.contains("icanon") && modes.contains("echo"), "the terminal mode was not restored:\n\(after)")
        #expect(try !tmux.alternateScreen())
        #expect(try tmux.cursorVisible(), "the cursor was left hidden")
    }

    @Test("top under tmux meters every stream on its own connection: a playing one moves with its volume, a silent one shows none")
    func topMetersStreams() throws {
        let (music, _) = try session.startMusic()
        let quiet = try session.play(.silence, role: "production", name: "quiet-app")
        let daemon = try session.startDaemon()
        let tmux = try Tmux(columns: 140, rows: 24)
        try tmux.start("\(TestEnvironment.daemonBinary) top --socket \(daemon.socketPath)")
        /// The METER column of `app`'s row: the level in dBFS, or -inf for silence; nil before a peak.
        func meter(_ app: String, in screen: String) -> Double? {
            guard let row = screen.split(separator: "\n").first(where: { $0.contains(app) && $0.contains("[") }),
                  row.contains("METER") == false else { return nil }
            if row.contains(" -inf ") { return -.infinity }
            guard let match = row.firstMatch(of: /[▮|]+[·.]*\s+(-?\d+) dB \[/) else { return nil }
            return Double(match.1)
        }
        // The tone peaks at 0.4 (-8 dBFS) at the user's 85 % / 70 % (-4.2 / -9.3 dB in PulseAudio's cubic scale).
        let first = try tmux.await("top to meter the music and show silence for the quiet stream") { screen in
            guard let level = meter("music-app", in: screen) else { return false }
            return (-25 ... -5).contains(level) && meter("quiet-app", in: screen) == -.infinity
        }
        #expect(first.contains("METER"), "\(first)")
        // The meter moves with what is heard: the user turns the music down to 30 % (-31 dB).
        _ = try music.setVolume(percent: [30, 30])
        try tmux.await("the music's meter to fall below -30 dB") { screen in
            meter("music-app", in: screen).map { $0 < -30 && $0 > -60 } ?? false
        }
        // top's meters are its own: the daemon takes none of them for someone recording (which would make
        // the music a call).
        let status = try daemon.status()
        #expect(status.streams.allSatisfy { $0.class != "call" }, "\(DaemonTests.describe(status))")
        _ = quiet
        try tmux.send("q")
    }

    @Test("top quits on SIGTERM and restores the terminal")
    func topQuitsOnSigterm() throws {
        let daemon = try session.startDaemon()
        let tmux = try Tmux(columns: 100, rows: 24)
        try tmux.start("echo BEFORE-TOP; \(TestEnvironment.daemonBinary) top --socket \(daemon.socketPath); echo AFTER-TOP")
        try tmux.await("top to draw") { $0.contains("last decisions") }
        let top = try run("pgrep", "-P", String(try tmux.panePID())).trimmingCharacters(in: .whitespacesAndNewlines)
        try run("kill", "-TERM", top)
        let after = try tmux.await("top to quit on SIGTERM") { $0.contains("AFTER-TOP") }
        #expect(after.contains("BEFORE-TOP") && !after.contains("last decisions"), "\(after)")
        #expect(try !tmux.alternateScreen())
    }

    @Test("top without a terminal prints one plain snapshot (no escape sequences) and exits")
    func topWithoutTerminal() throws {
        let (music, _) = try session.startMusic()
        let daemon = try session.startDaemon()
        let text = try run(TestEnvironment.daemonBinary, "top", "--socket", daemon.socketPath)
        #expect(text.contains("music-app") && text.contains("music") && text.contains("playing"), "\(text)")
        #expect(!text.contains("\u{1B}"), "escape sequences in a pipe:\n\(text)")
        _ = music
        // No daemon: an error, exit 1, still no escapes.
        #expect(throws: CommandFailure.self) {
            try run(TestEnvironment.daemonBinary, "top", "--socket", folder.appendingPathComponent("none").path)
        }
    }
}

// MARK: - Installing

@Suite("Service: the unit file and make install")
struct ServiceInstallTests {
    @Test("the unit file verifies (systemd-analyze, user mode)")
    func unitFileVerifies() throws {
        let folder = try TestEnvironment.temporaryFolder("audio-policyd-unit")
        defer { try? FileManager.default.removeItem(at: folder) }
        let bindir = URL(fileURLWithPath: TestEnvironment.daemonBinary).deletingLastPathComponent().path
        let template = try String(contentsOf: TestEnvironment.packageRoot.appendingPathComponent("dist/audio-policyd.service"),
                                  encoding: .utf8)
        let unit = folder.appendingPathComponent("audio-policyd.service")
        try template.replacingOccurrences(of: "@bindir@", with: bindir).write(to: unit, atomically: true, encoding: .utf8)
        let keys = UnitFile(text: template)
        #expect(keys["Service", "Type"] == ["notify"])
        #expect(keys["Service", "ExecStart"] == ["@bindir@/audio-policyd-daemon"])
        #expect(keys["Service", "Restart"] == ["on-failure"])
        #expect(keys["Service", "ExecReload"]?.first?.contains("-HUP") == true)
        #expect(keys["Unit", "After"]?.first?.contains("pipewire-pulse.service") == true)
        #expect(keys["Unit", "After"]?.first?.contains("pulseaudio.service") == true)
        #expect(keys["Install", "WantedBy"] == ["default.target"])

        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze") else {
            // No systemd here: the structural checks above are what can be checked.
            return
        }
        let runtime = folder.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        let output = try run(["env", "XDG_RUNTIME_DIR=\(runtime.path)", "sh", "-c",
                              "systemd-analyze --user verify --man=no '\(unit.path)' 2>&1"])
        // verify exits 0 on unknown keys and bad values too: it must say nothing at all.
        #expect(output.isEmpty, "systemd-analyze verify:\n\(output)")
        // And it does complain about a broken unit (the check can fail).
        try (template.replacingOccurrences(of: "@bindir@", with: bindir) + "\n[Service]\nType=notifyy\n")
            .write(to: unit, atomically: true, encoding: .utf8)
        let broken = try run(["env", "XDG_RUNTIME_DIR=\(runtime.path)", "sh", "-c",
                              "systemd-analyze --user verify --man=no '\(unit.path)' 2>&1"])
        #expect(broken.contains("notifyy"), "\(broken)")
    }

    @Test("make install DESTDIR=… PREFIX=/usr lays out every file; make uninstall removes them")
    func makeInstall() throws {
        let folder = try TestEnvironment.temporaryFolder("audio-policyd-install")
        defer { try? FileManager.default.removeItem(at: folder) }
        let stage = folder.appendingPathComponent("stage").path
        let root = TestEnvironment.packageRoot.path
        let make = ["make", "-s", "-C", root, "DESTDIR=\(stage)", "PREFIX=/usr", "GNOME_SHELL_LEGACY=no",
                    "BIN=\(TestEnvironment.daemonBinary)", "SCRATCH=\(folder.path)/scratch"]
        try run(make + ["install"], timeout: 60)

        let expected = [
            "usr/bin/audio-policyd", "usr/bin/audio-policyd-daemon", "usr/lib/systemd/user/audio-policyd.service",
            "usr/share/doc/audio-policyd/examples/policy.toml", "usr/share/doc/audio-policyd/examples/car.toml",
            "usr/share/doc/audio-policyd/examples/calls-only.toml", "usr/share/doc/audio-policyd/examples/calls-duck.toml",
            "usr/share/doc/audio-policyd/examples/focus.toml", "usr/share/doc/audio-policyd/examples/listening.toml",
            "usr/share/man/man1/audio-policyd.1",
            "usr/share/bash-completion/completions/audio-policyd", "usr/share/zsh/site-functions/_audio-policyd",
            "usr/share/fish/vendor_completions.d/audio-policyd.fish",
        ]
        // The focus helpers for Wayland desktops, as KWin and GNOME Shell look for them (desktop/).
        let kwin = "usr/share/kwin/scripts/audio-policyd-focus/"
        let gnome = "usr/share/gnome-shell/extensions/audio-policyd-focus@audio-policyd/"
        let desktopFiles = [
            (kwin + "metadata.json", "desktop/kwin/audio-policyd-focus/metadata.json"),
            (kwin + "contents/code/main.js", "desktop/kwin/audio-policyd-focus/contents/code/main.js"),
            (gnome + "metadata.json", "desktop/gnome-shell/audio-policyd-focus@audio-policyd/metadata.json"),
            (gnome + "extension.js", "desktop/gnome-shell/audio-policyd-focus@audio-policyd/extension.js"),
            (gnome + "focusTeller.js", "desktop/gnome-shell/audio-policyd-focus@audio-policyd/focusTeller.js"),
        ]
        for file in expected {
            let path = stage + "/" + file
            #expect(FileManager.default.fileExists(atPath: path), "missing \(file)")
        }
        for (installed, source) in desktopFiles {
            let copy = FileManager.default.contents(atPath: stage + "/" + installed)
            #expect(copy != nil && copy == FileManager.default.contents(atPath: root + "/" + source), "\(installed) is not \(source)")
        }
        // GNOME Shell 43 and 44 get the legacy extension.js and metadata, with the same socket client.
        let legacyStage = folder.appendingPathComponent("legacy").path
        try run(make.map { $0 == "DESTDIR=\(stage)" ? "DESTDIR=\(legacyStage)" : $0 == "GNOME_SHELL_LEGACY=no" ? "GNOME_SHELL_LEGACY=yes" : $0 }
                + ["install"], timeout: 60)
        for file in ["metadata.json", "extension.js"] {
            #expect(FileManager.default.contents(atPath: legacyStage + "/" + gnome + file) == FileManager.default.contents(
                atPath: root + "/desktop/gnome-shell/gnome-43-44/audio-policyd-focus@audio-policyd/" + file), "legacy \(file)")
        }
        #expect(FileManager.default.fileExists(atPath: legacyStage + "/" + gnome + "focusTeller.js"))
        #expect(FileManager.default.isExecutableFile(atPath: stage + "/usr/bin/audio-policyd"))
        #expect(FileManager.default.isExecutableFile(atPath: stage + "/usr/bin/audio-policyd-daemon"))
        let unit = try String(contentsOfFile: stage + "/usr/lib/systemd/user/audio-policyd.service", encoding: .utf8)
        #expect(unit.contains("\nExecStart=/usr/bin/audio-policyd-daemon\n") && !unit.contains("@bindir@"), "\(unit)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: stage + "/usr/share/doc/audio-policyd/examples/policy.toml"))
            == Data(contentsOf: TestEnvironment.defaultPolicy))
        for completion in expected.filter({ $0.contains("completion") || $0.contains("zsh") }) {
            let text = try String(contentsOfFile: stage + "/" + completion, encoding: .utf8)
            #expect(text.contains("audio-policyd") && text.contains("top") && text.contains("status"), "\(completion)")
        }
        // The man page is well-formed roff: man renders it without a warning.
        let rendered = try run(["sh", "-c", "MANWIDTH=80 man --warnings -l '\(stage)/usr/share/man/man1/audio-policyd.1' 2>&1"])
        #expect(rendered.contains("AUDIO-POLICYD(1)") && rendered.contains("journal.json"), "\(rendered.prefix(400))")
        // groff's warnings read `troff:FILE:LINE: warning: …` (the page's own text may say "with a warning").
        #expect(!rendered.contains(": warning"), "\(rendered)")

        try run(make + ["uninstall"], timeout: 60)
        for file in expected + desktopFiles.map(\.0) {
            #expect(!FileManager.default.fileExists(atPath: stage + "/" + file), "left behind: \(file)")
        }
        for folder in [kwin, gnome] {
            #expect(!FileManager.default.fileExists(atPath: stage + "/" + folder), "left behind: \(folder)")
        }
    }
}

/// A unit file's keys by section (a key may repeat), for the structural checks.
struct UnitFile {
    private var values: [String: [String: [String]]] = [:]

    init(text: String) {
        var section = ""
        for raw in text.split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                section = String(line.dropFirst().dropLast())
                continue
            }
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[section, default: [:]][String(line[..<equals]), default: []].append(String(line[line.index(after: equals)...]))
        }
    }

    subscript(section: String, key: String) -> [String]? { values[section]?[key] }
}

// MARK: - Helpers

/// A datagram socket bound where `NOTIFY_SOCKET` says (a path, or `@name` for an abstract one), as
/// systemd listens for a Type=notify service.
final class NotifyListener {
    private let fd: Int32
    private let path: String?

    init(address: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(address.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        path = abstract ? nil : address
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(2 + bytes.count + (abstract ? 0 : 1))
        let bound = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else {
            throw CommandFailure(description: "bind \(address): \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        close(fd)
        if let path { unlink(path) }
    }

    /// The next datagram; throws after 10 s without one.
    func receive() throws -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        guard count >= 0 else { throw CommandFailure(description: "no notification within 10 s") }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }
}

/// A private tmux server (its own socket in `folder`) with one window running a shell command; the
/// server is killed when this goes, so no tmux outlives its test.
final class Tmux {
    let socket: String
    let columns: Int
    let rows: Int
    private let folder: URL
    private let changes = Changes()
    /// The tmux server's pid, killed with its socket's folder when this goes.
    private var serverPID: Int32?

    init(columns: Int, rows: Int) throws {
        folder = try TestEnvironment.temporaryFolder("audio-policyd-tmux")
        socket = folder.appendingPathComponent("socket").path
        self.columns = columns
        self.rows = rows
    }

    deinit {
        _ = try? run("tmux", "-S", socket, "kill-server")
        if let serverPID, kill(serverPID, 0) == 0 { kill(serverPID, SIGKILL) }
        try? FileManager.default.removeItem(at: folder)
    }

    /// The pid of the process running in the pane (`sh`).
    func panePID() throws -> Int32 {
        let text = try run("tmux", "-S", socket, "display-message", "-p", "-t", "t", "#{pane_pid}")
        guard let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw CommandFailure(description: "no pane pid: \(text)")
        }
        return pid
    }

    /// Starts `command` under `sh` in a detached session of the given size; the pane stays after the
    /// command exits, so its last screen can be read.
    func start(_ command: String) throws {
        try Self.spawnDetached(["tmux", "-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", "t",
                                "-x", String(columns), "-y", String(rows),
                                "env", "TERM=xterm-256color", "LANG=C.UTF-8", "sh", "-c", command])
        serverPID = Int32(try run("tmux", "-S", socket, "display-message", "-p", "#{pid}")
            .trimmingCharacters(in: .whitespacesAndNewlines))
        try run("tmux", "-S", socket, "set-option", "-t", "t", "remain-on-exit", "on")
    }

    /// Runs a command that leaves a daemon behind (the tmux server) and waits for it to return. Not
    /// through Foundation's Process: it notices an exit when every holder of a pipe it hands the
    /// child has closed it, and the tmux server would hold it for as long as it runs. So: posix_spawn
    /// with every descriptor but 0-2 closed, and waitpid.
    static func spawnDetached(_ arguments: [String], timeout: Double = 10) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd in Int32(0)...2 { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0) }
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for fd in open.compactMap(Int32.init) where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let spawned = posix_spawnp(&pid, arguments[0], &actions, nil, argv, environ)
        guard spawned == 0 else { throw CommandFailure(description: "\(arguments[0]): \(String(cString: strerror(spawned)))") }
        let deadline = Date() + timeout
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            guard Date() < deadline else {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                throw CommandFailure(description: "\(arguments.joined(separator: " ")) did not return within \(timeout) s")
            }
            // The client returns within milliseconds; nothing announces it but its exit.
            usleep(10_000)
        }
        guard status == 0 else { throw CommandFailure(description: "\(arguments[0]) failed (wait status \(status))") }
    }

    /// The visible screen, as text.
    func capture() throws -> String {
        try run("tmux", "-S", socket, "capture-pane", "-p", "-t", "t")
    }

    func send(_ keys: String) throws {
        try run("tmux", "-S", socket, "send-keys", "-t", "t", keys)
    }

    func alternateScreen() throws -> Bool {
        try run("tmux", "-S", socket, "display-message", "-p", "-t", "t", "#{alternate_on}")
            .trimmingCharacters(in: .whitespacesAndNewlines) == "1"
    }

    func cursorVisible() throws -> Bool {
        try run("tmux", "-S", socket, "display-message", "-p", "-t", "t", "#{cursor_flag}")
            .trimmingCharacters(in: .whitespacesAndNewlines) == "1"
    }

    /// Re-reads the screen until `condition` holds; nothing announces a redraw, so it is read again
    /// every 100 ms (``Changes/recheck``), for at most `timeout` seconds.
    @discardableResult
    func await(_ what: String, timeout: Double = 8, _ condition: (String) -> Bool) throws -> String {
        try changes.await(what, timeout: timeout) { () throws -> Probe<String> in
            let text = try capture()
            return condition(text) ? .done(text) : .waiting("screen:\n\(text)")
        }
    }
}
