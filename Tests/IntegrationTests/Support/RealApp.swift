import Foundation

/// A real desktop app nobody here wrote — Chromium or Firefox on a local page, speech-dispatcher through
/// `spd-say`, libcanberra through `canberra-gtk-play` — started by the launchers in `Tests/RealApps/bin`
/// against the test server. Each launcher runs its app in a process group of its own, with its own Xvfb,
/// profile and runtime folders; `deinit` ends the whole group (SIGTERM, then SIGKILL) so nothing outlives
/// the test.
final class RealApp {
    let name: String
    private let child: Child

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

    private init(_ name: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        self.name = name
        var variables = TestEnvironment.variables
        variables.merge(environment) { _, new in new }
        child = try Child([Self.launchers.appendingPathComponent(arguments[0]).path] + arguments.dropFirst(),
                          environment: variables)
    }

    /// `browser` (`chromium` or `firefox`) showing `page` (ping, silent, soundtrack, call).
    static func browser(_ browser: String, page: String) throws -> RealApp {
        try RealApp("\(browser) on \(page).html", ["browser", browser, page])
    }

    /// speech-dispatcher saying each phrase, `gap` seconds apart.
    static func speak(_ phrases: [String], gap: Double = 2) throws -> RealApp {
        try RealApp("spd-say", ["speak", "--gap", String(gap)] + phrases)
    }

    /// An event sound through libcanberra's pulse backend.
    static func canberra(_ arguments: [String] = ["-i", "message-new-instant"]) throws -> RealApp {
        try RealApp("canberra-gtk-play", ["canberra"] + arguments)
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
            return .waiting("streams: \(streams)")
        }
    }
}
