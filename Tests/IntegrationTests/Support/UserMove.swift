import Foundation

/// A user's move of a stream to another output (`pactl move-sink-input`, as pavucontrol does it),
/// awaited until the server reports the stream there.
///
/// Why more than one move: on pipewire-pulse 0.3.65 with WirePlumber 0.4 the stream is now and then
/// still reported on its old sink seconds after a move (a CI run found mpv on the headset after three
/// moves; 2 of 30 runs of `OutputTests` beside two CPU hogs), although WirePlumber's log, at level `I`,
/// shows it linked to the new sink at once: what lags is pipewire-pulse's report. pipewire-pulse only
/// writes the stream's `target.node` and `target.object` into the "default" metadata, and WirePlumber
/// links the stream anew when that metadata changes. A second `pactl move-sink-input` to the same sink
/// writes the same values, which is no change (seen with `pw-metadata -m`: no update at all), so nothing
/// happens and repeating the move cannot help. Each further try therefore deletes the stream's two
/// targets and writes them itself (`pw-metadata`, the values pipewire-pulse writes), so that the write is
/// a change WirePlumber acts on, linking the stream again, and the report follows. PulseAudio moves at
/// once; there the first move is the only one.
///
/// Why each try waits longer: a CI run's PipeWire leg moved a stream just after a headset was loaded,
/// four times 2 s apart, and found neither a line of WirePlumber's policy after the stream's first link
/// nor any target of the stream in the metadata. WirePlumber 0.4's policy skips every rescan, silently
/// below level D, while any session item is still being activated (`checkPending` in policy-node.lua),
/// and says so only after 20 s. The tries wait 2, 4, 6, 8 and 10 s (30 s in all, past that message,
/// which the failure quotes); a move that works takes milliseconds, so only a stuck one waits.
enum UserMove {
    /// Tries before the move counts as failed; try `n` (from 1) waits `n` times `patience` seconds for
    /// the server's report.
    static let tries = 5
    static let patience = 2.0

    /// Moves sink input `index` to the sink named `sinkName` (index `sinkIndex`) and returns how many
    /// moves it took; `current` reads the stream as the server reports it now.
    @discardableResult
    static func move(_ index: UInt32, to sinkName: String, sinkIndex: UInt32, changes: Changes,
                     current: () throws -> ServerStream) throws -> Int {
        var moves = 0
        while case let stream = try current(), stream.sink != sinkIndex {
            moves += 1
            guard moves <= tries else {
                throw CommandFailure(description: "sink input #\(index) is still on sink \(stream.sink) after "
                                     + "\(tries) moves to \(sinkName) (\(sinkIndex)): \(diagnosis())")
            }
            if moves > 1, let node = stream.properties["object.id"], let sink = try pipeWireSink(named: sinkName) {
                retarget(node: node, to: sink)
            } else {
                _ = try run("pactl", "move-sink-input", "\(index)", sinkName)
            }
            _ = try? changes.await("sink input #\(index) on \(sinkName)", timeout: patience * Double(moves)) {
                () throws -> Probe<Void> in
                let sink = try current().sink
                return sink == sinkIndex ? .done(()) : .waiting("on sink \(sink)")
            }
        }
        if moves > 1 { print("sink input #\(index) needed \(moves) moves to \(sinkName) (WirePlumber left it)") }
        return moves
    }

    /// PipeWire's socket under the test server's folder (scripts/sound-server), if this is PipeWire.
    private static var pipeWireRemote: [String: String]? {
        guard TestEnvironment.serverKind == "pipewire",
              let folder = TestEnvironment.variables["SOUND_SERVER_DIR"] else { return nil }
        var environment = TestEnvironment.variables
        environment["PIPEWIRE_REMOTE"] = folder + "/runtime/pipewire-0"
        return environment
    }

    /// The PipeWire node id and object serial of the sink named `name`, as pipewire-pulse reports them;
    /// nil on PulseAudio.
    private static func pipeWireSink(named name: String) throws -> (node: String, serial: String)? {
        guard pipeWireRemote != nil else { return nil }
        let data = Data(try run("pactl", "--format=json", "list", "sinks").utf8)
        let sinks = (try JSONSerialization.jsonObject(with: data) as? [[String: Any]]) ?? []
        guard let sink = sinks.first(where: { $0["name"] as? String == name }),
              let properties = sink["properties"] as? [String: Any],
              let node = properties["object.id"] as? String, let serial = properties["object.serial"] as? String
        else { throw CommandFailure(description: "pipewire-pulse reports no sink \(name) with its node and serial") }
        return (node, serial)
    }

    /// Writes node `node`'s move targets into PipeWire's "default" metadata as pipewire-pulse's move does
    /// (`target.node` the sink's node id, `target.object` its serial), after deleting them, so that the
    /// write is a change WirePlumber acts on. Written directly, with pw-metadata, which waits for the
    /// server to take it: a retry does not depend on pipewire-pulse a second time (a CI run's four moves
    /// left no target of the stream in the metadata at all).
    private static func retarget(node: String, to sink: (node: String, serial: String)) {
        guard let environment = pipeWireRemote else { return }
        for key in ["target.object", "target.node"] {
            _ = try? outcome(["pw-metadata", "-d", node, key], environment: environment, timeout: 5)
        }
        _ = try? outcome(["pw-metadata", node, "target.node", sink.node, "Spa:Id"], environment: environment, timeout: 5)
        _ = try? outcome(["pw-metadata", node, "target.object", sink.serial, "Spa:Id"], environment: environment,
                         timeout: 5)
    }

    /// What PipeWire's metadata and WirePlumber's log say, for a failed move's message.
    private static func diagnosis() -> String {
        guard let environment = pipeWireRemote, let folder = TestEnvironment.variables["SOUND_SERVER_DIR"] else {
            return "(PulseAudio)"
        }
        let metadata = (try? outcome(["pw-metadata"], environment: environment, timeout: 5))?.output ?? "?"
        let log = ((try? String(contentsOfFile: folder + "/wireplumber.log", encoding: .utf8)) ?? "").split(separator: "\n")
        // Its policy's moves and waits (level I), then the end of the log.
        let policy = log.filter { $0.contains("policy-node") && !$0.contains("handling item") }.suffix(25)
        return "metadata:\n\(metadata)\nWirePlumber's policy (last 25):\n\(policy.joined(separator: "\n"))\n"
            + "WirePlumber's log (end):\n\(log.suffix(15).joined(separator: "\n"))"
    }
}
