import Foundation

/// An app playing a tone on the test server: `paplay` (with a `media.role` and an application name),
/// or `aplay` through ALSA's pulse plugin (no role at all, like most real apps).
final class Player {
    enum Program {
        case paplay
        /// `aplay -D pulse`: needs libasound2-plugins; the stream has no `media.role`.
        case aplay
    }

    let name: String
    let role: String?
    private let child: Child
    private let changes: Changes
    /// The sink input, once seen.
    private(set) var index: UInt32?

    /// Starts playing `tone`. `role` and `name` apply to paplay only.
    init(_ tone: Tone, role: String?, name: String, program: Program = .paplay, changes: Changes) throws {
        self.name = name
        self.role = role
        self.changes = changes
        let file = try tone.file().path
        switch program {
        case .paplay:
            var arguments = ["paplay", "--client-name=\(name)", "--property=application.name=\(name)"]
            if let role { arguments.append("--property=media.role=\(role)") }
            child = try Child(arguments + [file])
        case .aplay:
            child = try Child(["aplay", "-q", "-D", "pulse", file])
        }
    }

    deinit { child.kill() }

    var pid: Int32 { child.pid }
    var isRunning: Bool { child.isRunning }

    /// Waits for the player's sink input (`application.process.id` = the player's pid) and returns it.
    @discardableResult
    func awaitStream(timeout: Double = 5) throws -> ServerStream {
        let stream = try SoundServer.awaitStream(of: child, name: name, changes: changes, timeout: timeout)
        index = stream.index
        return stream
    }

    /// The stream as the server reports it now.
    func stream() throws -> ServerStream {
        try SoundServer.current(index, of: name)
    }

    /// Sets the stream's volume the way a user would, and waits until the server reports it.
    @discardableResult
    func setVolume(percent: [Double]) throws -> Volume {
        let raw = percent.map { UInt32(($0 / 100 * Volume.norm).rounded()) }
        guard let index else { throw CommandFailure(description: "\(name): no stream awaited yet") }
        try SoundServer.setVolume(index, raw: raw)
        return try changes.await("\(name)'s volume to become \(raw)", timeout: 5) { () throws -> Probe<Volume> in
            let now = try stream()
            // pipewire-pulse converts to floats and back: allow one raw unit.
            let close = zip(now.volume.raw, raw).allSatisfy { abs(Int64($0) - Int64($1)) <= 1 }
            return close && now.volume.raw.count == raw.count ? .done(now.volume) : .waiting("\(now)")
        }
    }

    /// Unmutes the stream as a user would, and waits until the server reports it.
    func unmute() throws {
        try setMuted(false)
    }

    /// Mutes or unmutes the stream as a user would, and waits until the server reports it.
    func setMuted(_ muted: Bool) throws {
        guard let index else { throw CommandFailure(description: "\(name): no stream awaited yet") }
        try run("pactl", "set-sink-input-mute", String(index), muted ? "1" : "0")
        try changes.await("\(name) to be \(muted ? "muted" : "unmuted")", timeout: 5) { () throws -> Probe<Void> in
            let now = try stream()
            return now.muted == muted ? .done(()) : .waiting("\(now)")
        }
    }

    /// Ends the app normally (SIGTERM) and waits until it has exited.
    func stop() { child.stop() }

    /// Kills the app (SIGKILL), as a crash would, and waits until it has exited.
    func kill() { child.kill() }
}
