import Foundation

/// The test sound server as processes: scripts/sound-server started it in `SOUND_SERVER_DIR`, and a
/// test can stop it and start it again there (same socket, same saved stream-restore database).
struct SoundServerProcess {
    let directory: String
    /// `pulseaudio` or `pipewire`.
    let kind: String

    /// The server of this test run; throws when the environment does not say where it lives.
    static func current() throws -> SoundServerProcess {
        guard let directory = TestEnvironment.variables["SOUND_SERVER_DIR"], !directory.isEmpty else {
            throw CommandFailure(description: "SOUND_SERVER_DIR is not set: start the server with "
                + "eval \"$(scripts/sound-server start KIND DIR)\" (it exports it)")
        }
        let info = try run("pactl", "info")
        let kind = info.contains("PipeWire") ? "pipewire" : "pulseaudio"
        return SoundServerProcess(directory: directory, kind: kind)
    }

    private var script: String { TestEnvironment.packageRoot.appendingPathComponent("scripts/sound-server").path }

    /// Stops the server (SIGTERM, in reverse start order) and starts it again; returns once it answers.
    func restart() throws {
        try run([script, "stop", directory], timeout: 30)
        // Not through run(): the servers (and PipeWire's bus daemon) it leaves running would hold the
        // output pipes open; Tmux.spawnDetached gives them /dev/null and no other descriptor.
        try Tmux.spawnDetached([script, "start", kind, directory], timeout: 30)
    }

    /// Restarts the server with its saved stream volumes wiped (`scripts/sound-server forget`): for a
    /// test that must not start from what an earlier test left saved (WirePlumber restores its own
    /// saved level to every new stream, and pipewire-pulse does not read all of it back for a test to
    /// know).
    func forget() throws {
        try Tmux.spawnDetached([script, "forget", directory], timeout: 60)
    }
}
