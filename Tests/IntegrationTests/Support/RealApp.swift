import Foundation

/// A real desktop app nobody here wrote — Chromium or Firefox on a local page, speech-dispatcher through
/// `spd-say`, libcanberra through `canberra-gtk-play` — started by the launchers in `Tests/RealApps/bin`
/// against the test server. Each launcher runs its app in a process group of its own, with its own Xvfb,
/// profile and runtime folders; `deinit` ends the whole group (SIGTERM, then SIGKILL) so nothing outlives
/// the test. Games (SDL2's `loopwave`, OpenAL's `alurestream`) need no launcher: one process each,
/// started directly.
final class RealApp {
    let name: String
    private let child: Child
    /// The named pipe a browser takes more pages from (``open(_:)``), if it was started with one.
    private var opener: URL?
    /// The browser's log (the launcher's `BROWSER_LOG`), if kept: what its pages said goes into a
    /// failed wait's report.
    private var log: URL?

    /// What the launchers need, or why the real-app tests cannot run here.
    static let missing: String? = {
        if SessionBus.missing != nil { return SessionBus.missing }
        for program in ["chromium", "firefox-esr", "spd-say", "speech-dispatcher", "canberra-gtk-play", "Xvfb"]
            where !SessionBus.installed(program) {
            return "\(program) is not installed (scripts/test installs it)"
        }
        return nil
    }()

    static let launchers = TestEnvironment.packageRoot.appendingPathComponent("Tests/RealApps/bin")

    /// SDL2's test program that loops a WAV, as a game plays its soundtrack (Debian: libsdl2-tests).
    static let loopwave = "/usr/libexec/installed-tests/SDL2/loopwave"

    /// What the game tests need (SDL2's `loopwave`, OpenAL's `alurestream`), or why they cannot run here.
    static let gamesMissing: String? = {
        if SessionBus.missing != nil { return SessionBus.missing }
        if !FileManager.default.isExecutableFile(atPath: loopwave) {
            return "\(loopwave) is not installed (Debian: libsdl2-tests; scripts/test installs it)"
        }
        if !SessionBus.installed("alurestream") {
            return "alurestream is not installed (Debian: alure-utils; scripts/test installs it)"
        }
        return nil
    }()

    /// A launcher of `Tests/RealApps/bin` (`arguments[0]`) and its arguments.
    private convenience init(_ name: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        try self.init(name, command: [Self.launchers.appendingPathComponent(arguments[0]).path] + arguments.dropFirst(),
                      environment: environment)
    }

    /// Any program, with the test environment (the test server, the private bus) plus `environment`.
    private init(_ name: String, command: [String], environment: [String: String] = [:]) throws {
        self.name = name
        var variables = TestEnvironment.variables
        variables.merge(environment) { _, new in new }
        // Default signals: the launchers clean up (browser tree, Xvfb, temp dir, the microphone module) on
        // SIGTERM, which the test thread's mask would keep blocked.
        child = try Child(command, environment: variables, defaultSignals: true)
    }

    /// `browser` (`chromium` or `firefox`) showing `page` (ping, silent, soundtrack, call; `name?query`).
    static func browser(_ browser: String, page: String) throws -> RealApp {
        try RealApp("\(browser) on \(page).html", ["browser", browser, page])
    }

    /// Chromium showing `page`, which opens more pages in new windows of the same browser process, as a
    /// user's next window would (``open(_:)``; the launcher's `BROWSER_OPEN`).
    static func chromiumTakingWindows(page: String) throws -> RealApp {
        let pipe = TestEnvironment.scratch.appendingPathComponent("open-\(UUID().uuidString.prefix(8))")
        guard mkfifo(pipe.path, 0o600) == 0 else {
            throw CommandFailure(description: "mkfifo \(pipe.path): errno \(errno)")
        }
        let log = TestEnvironment.scratch.appendingPathComponent("browser-\(UUID().uuidString.prefix(8)).log")
        let app = try RealApp("chromium on \(page).html", ["browser", "chromium", page],
                              environment: ["BROWSER_OPEN": pipe.path, "BROWSER_LOG": log.path])
        app.opener = pipe
        app.log = log
        return app
    }

    /// Opens `page` (as the launcher takes it: `soundtrack?element`) in a new window of the running browser.
    func open(_ page: String) throws {
        guard let opener else { throw CommandFailure(description: "\(name) takes no more pages") }
        // Opening the pipe waits for the launcher's reader, which is there as long as the browser runs.
        let handle = try FileHandle(forWritingTo: opener)
        try handle.write(contentsOf: Data((page + "\n").utf8))
        try handle.close()
    }

    /// speech-dispatcher saying each phrase, `gap` seconds apart; with `wrapper`, run as its command
    /// (`audio-policyd interrupt … --`).
    static func speak(_ phrases: [String], gap: Double = 2, under wrapper: [String] = []) throws -> RealApp {
        guard !wrapper.isEmpty else { return try RealApp("spd-say", ["speak", "--gap", String(gap)] + phrases) }
        return try RealApp("spd-say under \(wrapper[0])",
                           command: wrapper + [launchers.appendingPathComponent("speak").path, "--gap", String(gap)] + phrases)
    }

    /// An event sound through libcanberra's pulse backend.
    static func canberra(_ arguments: [String] = ["-i", "message-new-instant"]) throws -> RealApp {
        try RealApp("canberra-gtk-play", ["canberra"] + arguments)
    }

    /// A game playing its soundtrack through SDL2 (`loopwave`, looping `file`), with SDL's own choice
    /// of audio driver, as a user gets it.
    static func sdlGame(playing file: URL) throws -> RealApp {
        try RealApp("loopwave", command: [loopwave, file.path])
    }

    /// A game playing its soundtrack through OpenAL Soft (`alurestream`, streaming `file` once).
    static func openALGame(playing file: URL) throws -> RealApp {
        try RealApp("alurestream", command: ["alurestream", file.path])
    }

    deinit { stop() }

    var isRunning: Bool { child.isRunning }

    /// Ends the app and everything it started, cleanly if it can.
    func stop() {
        guard child.isRunning else { return }
        child.signal(SIGTERM)
        if child.wait(timeout: 10) == nil {
            Foundation.kill(-child.pid, SIGKILL)
            child.kill()
        }
    }

    /// Waits until the app exits by itself (a phrase spoken, a sound played); its exit status.
    func awaitExit(timeout: Double) throws -> Int32 {
        guard let code = child.wait(timeout: timeout) else {
            throw CommandFailure(description: "\(name) still running after \(timeout) s")
        }
        return code
    }

    /// Waits for the app's playback stream: the first new sink input whose properties satisfy `matches`.
    func awaitStream(changes: Changes, timeout: Double = 40, excluding known: Set<UInt32> = [],
                     _ matches: @escaping ([String: String]) -> Bool) throws -> ServerStream {
        try changes.await("\(name)'s stream to appear", timeout: timeout) { () throws -> Probe<ServerStream> in
            if let code = child.exitCode, code != 0 {
                throw CommandFailure(description: "\(name) exited with \(code)")
            }
            let streams = try SoundServer.streams()
            if let mine = streams.first(where: { !known.contains($0.index) && matches($0.properties) }) {
                return .done(mine)
            }
            return .waiting("streams: \(streams)\(pagesSaid)")
        }
    }

    /// What the browser's pages said (their `realapps` console lines) and its errors, from its log if kept:
    /// whether a page opened, played or failed to.
    private var pagesSaid: String {
        guard let log, let text = try? String(contentsOf: log, encoding: .utf8) else { return "" }
        let lines = text.split(separator: "\n").filter { $0.contains("realapps") || $0.contains(":ERROR:") }
        return lines.isEmpty ? "; its log says nothing of its pages" : "; its log: " + lines.suffix(12).joined(separator: " | ")
    }
}
