import Foundation

/// The test sound server, seen the way a user sees it: through `pactl`.
enum SoundServer {
    /// The null sink scripts/sound-server creates; its monitor is what we record.
    static let sink = "policy_test"

    /// Every playback stream (sink input) on the server now.
    static func streams() throws -> [ServerStream] {
        let json = try run("pactl", "-f", "json", "list", "sink-inputs")
        guard let list = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]] else {
            throw CommandFailure(description: "pactl -f json list sink-inputs: not a list: \(json.prefix(200))")
        }
        return try list.map(ServerStream.init(json:))
    }

    static func stream(_ index: UInt32) throws -> ServerStream? {
        try streams().first { $0.index == index }
    }

    /// Waits for the sink input of `child` (`application.process.id` = its pid) and returns it; throws
    /// if the child exits first. `name` is for messages.
    /// `pid` is the one the stream carries when it is not the child's (an app in a sandbox's pid namespace).
    static func awaitStream(of child: Child, pid: Int32? = nil, name: String, changes: Changes, timeout: Double) throws
        -> ServerStream {
        let pid = pid ?? child.pid
        return try changes.await("\(name)'s stream (pid \(pid)) to appear", timeout: timeout) {
            () throws -> Probe<ServerStream> in
            if let code = child.exitCode { throw CommandFailure(description: "\(child.name) exited with \(code)") }
            let streams = try SoundServer.streams()
            if let mine = streams.first(where: { $0.pid == pid }) { return .done(mine) }
            return .waiting("streams: \(streams)")
        }
    }

    /// Awaits a server with no streams: each test starts on a quiet server, what an earlier test started
    /// gone, and no other suite playing meanwhile (the daemon would act on its streams, and they would be
    /// recorded).
    static func awaitQuiet(changes: Changes) throws {
        try changes.await("a server with no streams (left over, or another suite's: run with --no-parallel)",
                          timeout: 5) { () throws -> Probe<Void> in
            let left = try streams()
            return left.isEmpty ? .done(()) : .waiting("\(left)")
        }
    }

    /// The awaited sink input `index` of `name`, as the server reports it now; throws if none was
    /// awaited or it is gone.
    static func current(_ index: UInt32?, of name: String) throws -> ServerStream {
        guard let index else { throw CommandFailure(description: "\(name): no stream awaited yet") }
        guard let stream = try stream(index) else {
            throw CommandFailure(description: "\(name): sink input #\(index) is gone")
        }
        return stream
    }

    /// A microphone for tests to record from: a source of its own, no sink's monitor (the server has no
    /// other), named `name`; returns the module that made it, for ``unloadModule(_:)``. pipewire-pulse has
    /// no module-null-source; its null sink makes a virtual source when asked.
    ///
    /// The server's default source is left unconfigured, as on a fresh server. PulseAudio makes a new
    /// input the default and moves the recordings that follow the default onto it, the test monitor's
    /// `parec -d policy_test.monitor` included (seen on 16.1: the monitor then records the null source's
    /// silence); they are moved back one by one instead of naming the old default again, because a default
    /// named with `set-default-source` stays configured after the microphone is gone, and Chromium's call
    /// page then was no longer seen recording (its call stayed ambient in every web-call test after).
    static func loadMicrophone(named name: String) throws -> String {
        let before = try recordingSources()
        let module = try ((try? run("pactl", "load-module", "module-null-source", "source_name=\(name)"))
            ?? run("pactl", "load-module", "module-null-sink", "sink_name=\(name)", "media.class=Audio/Source/Virtual"))
            .trimmingCharacters(in: .whitespacesAndNewlines)
        // PA_INVALID_INDEX: pipewire-pulse lists a recording not linked yet on no source.
        for (capture, source) in try recordingSources() {
            guard let old = before[capture], old != source, old != UInt32.max else { continue }
            try run("pactl", "move-source-output", String(capture), String(old))
        }
        return module
    }

    /// Each source output's source, by index (`pactl list short source-outputs`).
    private static func recordingSources() throws -> [UInt32: UInt32] {
        var sources: [UInt32: UInt32] = [:]
        for line in try run("pactl", "list", "short", "source-outputs").split(separator: "\n") {
            let fields = line.split(separator: "\t")
            guard fields.count > 1, let capture = UInt32(fields[0]), let source = UInt32(fields[1]) else { continue }
            sources[capture] = source
        }
        return sources
    }

    static func unloadModule(_ module: String) {
        _ = try? run("pactl", "unload-module", module)
    }

    /// Sets a stream's volume as a user would (`pactl set-sink-input-volume`), raw per channel.
    static func setVolume(_ index: UInt32, raw: [UInt32]) throws {
        try run(["pactl", "set-sink-input-volume", String(index)] + raw.map(String.init))
    }
}

/// One sink input as `pactl -f json list sink-inputs` reports it.
struct ServerStream: CustomStringConvertible {
    var index: UInt32
    var properties: [String: String]
    var volume: Volume
    var muted: Bool
    var corked: Bool
    /// The sink it plays to.
    var sink: UInt32

    var pid: Int32? { properties["application.process.id"].flatMap { Int32($0) } }
    var role: String? { properties["media.role"] }
    var applicationName: String? { properties["application.name"] }

    init(json: [String: Any]) throws {
        guard let index = json["index"] as? Int, let volumes = json["volume"] as? [String: Any],
              let map = json["channel_map"] as? String else {
            throw CommandFailure(description: "unexpected sink input in pactl's JSON: \(json)")
        }
        self.index = UInt32(index)
        properties = (json["properties"] as? [String: Any] ?? [:]).compactMapValues { $0 as? String }
        muted = json["mute"] as? Bool ?? false
        corked = json["corked"] as? Bool ?? false
        sink = (json["sink"] as? Int).map(UInt32.init) ?? UInt32.max
        // JSON objects have no order: the channel map gives it.
        let raw = try map.split(separator: ",").map { channel -> UInt32 in
            guard let entry = volumes[String(channel)] as? [String: Any], let value = entry["value"] as? Int else {
                throw CommandFailure(description: "no volume for channel \(channel) in \(volumes)")
            }
            return UInt32(value)
        }
        volume = Volume(raw: raw)
    }

    var description: String {
        "#\(index) \(applicationName ?? "?") role=\(role ?? "none") \(volume)\(muted ? " muted" : "")\(corked ? " corked" : "")"
    }
}

/// Per-channel volume in PulseAudio's raw units (0x10000 = 100 % = 0 dB, cubic scale).
struct Volume: Equatable, CustomStringConvertible {
    static let norm = 65536.0
    var raw: [UInt32]

    /// Each channel in dB, the way libpulse converts (`pa_sw_volume_to_dB`).
    var decibels: [Double] { raw.map { 60 * log10(Double($0) / Self.norm) } }

    /// Each channel's linear amplitude factor.
    var linear: [Double] { raw.map { pow(Double($0) / Self.norm, 3) } }

    /// Whether every channel is `offset` dB (± `tolerance`) from the same channel of `reference`.
    func isOffset(by offset: Double, from reference: Volume, tolerance: Double) -> Bool {
        raw.count == reference.raw.count
            && zip(decibels, reference.decibels).allSatisfy { abs($0 - $1 - offset) <= tolerance }
    }

    /// The level difference, in dB, that changing from `reference` to this makes to a signal that is the
    /// same on every channel (what a recording of the whole sink measures).
    func gain(from reference: Volume) -> Double {
        let power = { (volume: Volume) in volume.linear.map { $0 * $0 }.reduce(0, +) }
        return 10 * log10(power(self) / power(reference))
    }

    var description: String {
        zip(raw, decibels).map { String(format: "%u (%.2f dB)", $0, $1) }.joined(separator: " / ")
    }
}

/// `pactl subscribe` as a child process: every event the server sends bumps `changes`, and the lines are
/// kept so a test can wait for a particular one.
final class ServerEvents {
    private let child: Child
    private let events: LineLog
    private let changes: Changes

    init(changes: Changes) throws {
        self.changes = changes
        let pipe = Pipe()
        child = try Child(["pactl", "subscribe"], standardOutput: pipe)
        events = LineLog(reading: pipe, changes: changes)
    }

    /// How many events have arrived so far.
    var count: Int { events.count }

    /// Waits for the server to announce that sink input `index` is gone.
    func awaitRemoval(of index: UInt32, timeout: Double = 10) throws {
        let line = "Event 'remove' on sink-input #\(index)"
        try changes.await("sink input #\(index) to be removed", timeout: timeout) { () throws -> Probe<Void> in
            if events.lines().contains(line) { return .done(()) }
            // A removal before pactl subscribed is not announced: ask the server too.
            return try SoundServer.stream(index) == nil ? .done(()) : .waiting("still listed")
        }
    }
}

/// The lines a child writes to a pipe, read on a thread of their own, kept in order (and copied to a
/// file if asked); each one bumps `changes`. The thread ends when the child closes the pipe.
final class LineLog: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []

    init(reading pipe: Pipe, changes: Changes, copyTo file: URL? = nil) {
        let handle = pipe.fileHandleForReading
        let copy = file.flatMap { url -> FileHandle? in
            _ = FileManager.default.createFile(atPath: url.path, contents: nil)
            return try? FileHandle(forWritingTo: url)
        }
        Thread.detachNewThread { [self] in
            var pending = Data()
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                copy?.write(data)
                pending.append(data)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    append(line)
                    changes.bump()
                }
            }
            try? copy?.close()
        }
    }

    private func append(_ line: String) {
        lock.lock()
        stored.append(line)
        lock.unlock()
    }

    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return stored.count
    }

    /// The lines so far, from the `from`th on.
    func lines(from: Int = 0) -> [String] {
        lock.lock()
        defer { lock.unlock() }
        return Array(stored.dropFirst(from))
    }
}
