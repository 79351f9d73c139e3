import AudioPolicy
import ControlProtocol
import Foundation
import Testing
import TestRequirements

// Apps in sandboxes, for real: mpv with mpv-mpris in bubblewrap with its own pid namespace, the
// session bus through xdg-dbus-proxy, as Flatpak runs it (Support/FlatpakSandbox.swift). On PulseAudio
// its stream says pid 2 and no app id; the daemon finds the app by its host process and the proxy's
// `.flatpak-info`. The control is the same sandbox without a `.flatpak-info`: nothing names the app,
// so its stream cannot be matched to its player and the daemon falls back to fading and muting.

extension MPRISTests {
    @Test("a sandboxed mpv (pid 2, bus through xdg-dbus-proxy) is paused over MPRIS by a second music app, and Now Playing names its app id",
          .needs(FlatpakSandbox.missing))
    func sandboxedMPVIsPausedOverMPRIS() throws {
        let sandbox = try FlatpakSandbox(appID: "io.mpv.Mpv", changes: changes)
        let mpv = try startMPV(sandbox: sandbox)
        #expect(try mpv.stream().pid == FlatpakSandbox.appPID, "the stream does not carry the sandbox's pid: no test")
        let daemon = try startDaemon()
        let owner = try awaitStatus(daemon, "the sandboxed mpv to own Now Playing through its player") {
            $0.nowPlaying?.player == mpv.busName
        }.nowPlaying
        #expect(owner?.appID == "io.mpv.Mpv", "\(String(describing: owner))")
        // The host pid of the sandboxed mpv, never the sandbox's 2.
        let hostPID = try #require(owner?.pid)
        #expect(hostPID != Int(FlatpakSandbox.appPID))
        #expect((try? String(contentsOfFile: "/proc/\(hostPID)/comm", encoding: .utf8))?.hasPrefix("mpv") == true)
        let text = try run(TestEnvironment.daemonBinary, "now-playing", "--socket", daemon.socketPath)
        #expect(text.contains("mpv [io.mpv.Mpv] (pid \(hostPID))") && text.contains("player: \(mpv.busName)"), "\(text)")
        let mark = daemon.logCount

        _ = try play(.otherMusic, role: "music", name: "music-two")
        try mpv.awaitStatus("Paused", timeout: 4)
        try daemon.awaitLog("Pause \(mpv.busName)", after: mark)
        try awaitStream(mpv, "corked, unmuted") { $0.corked && !$0.muted }
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    @Test("control: the same sandbox without a .flatpak-info cannot be matched to its player, so its mpv is muted, not paused",
          .needs(FlatpakSandbox.missing))
    func unnamedSandboxIsMuted() throws {
        let sandbox = try FlatpakSandbox(appID: nil, changes: changes)
        let mpv = try startMPV(sandbox: sandbox)
        let daemon = try startDaemon()
        let owner = try awaitStatus(daemon, "the sandboxed mpv to own Now Playing") { $0.nowPlaying?.index == mpv.index }
            .nowPlaying
        #expect(owner?.player == nil && owner?.appID == nil, "\(String(describing: owner))")
        #expect(owner?.pid != Int(FlatpakSandbox.appPID), "a sandbox's pid shown as a host pid: \(String(describing: owner))")

        _ = try play(.otherMusic, role: "music", name: "music-two")
        try awaitStream(mpv, "muted once the grace time is over", timeout: 5) { $0.muted }
        #expect(try mpv.status() == "Playing", "paused although nothing could name its player")
    }
}

// MARK: - playerctld beside the daemon

extension MPRISTests {
    @Test("playerctld beside the daemon changes nothing: it is never taken for a player, and media keys through it or us reach mpv once",
          .needs(!SessionBus.installed("playerctld") ? "playerctld is not installed (Debian: playerctl)" : nil))
    func playerctldIsIgnored() throws {
        let mpv = try startMPV()
        let playerctld = try start(["playerctld"])
        try changes.await("playerctld on the bus", timeout: 5) { () throws -> Probe<Void> in
            if let code = playerctld.exitCode { throw CommandFailure(description: "playerctld exited with \(code)") }
            // `playerctl -l` leaves playerctld out: ask the bus.
            return SessionBus.pid(of: "org.mpris.MediaPlayer2.playerctld") != nil ? .done(()) : .waiting("not yet")
        }
        let daemon = try startDaemon()
        try awaitNowPlaying(mpv, daemon)
        // Control: the daemon does take in the real player it sees.
        #expect(daemon.log.contains { $0.contains("player \(mpv.busName) appeared") })
        #expect(!daemon.log.contains { $0.contains("org.mpris.MediaPlayer2.playerctld") }, "playerctld taken for a player")
        let mark = daemon.logCount

        // playerctld follows the most recent player (ours or mpv): either way the key ends at mpv once.
        try SessionBus.playerctl("playerctld", "pause")
        try mpv.awaitStatus("Paused", timeout: 4)
        try SessionBus.playerctl("audiopolicy", "play")
        try mpv.awaitStatus("Playing", timeout: 4)
        try expectStays(mpv, "Playing", for: 1, "a forwarded key came back round")
        let forwarded = daemon.log.dropFirst(mark).filter { $0.contains("now playing: ") && $0.contains(" -> ") }
        #expect(forwarded.allSatisfy { $0.hasSuffix("-> \(mpv.busName)") }, "\(forwarded)")
        #expect(forwarded.count <= 2, "keys went round: \(forwarded)")
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }
}
