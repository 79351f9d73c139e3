/// Milliseconds on the engine's clock. The engine never reads a clock: every call is given `now`.
public typealias Milliseconds = Int

/// A stream's properties, as the sound server reports them (`media.role`, `application.name`, …).
public typealias Properties = [String: String]

/// One run of a sound server as a backend reaches it: which backend, and which instance of its server,
/// so that a stream's index there names one stream only (a restarted server numbers its streams from the
/// start again).
///
/// The pulse backend's instance is the server's cookie (`pa_server_info.cookie`, random each time the
/// server starts); the ALSA backend's server is the daemon itself, whose stream numbers never repeat.
public struct ServerInstance: Hashable, Sendable, CustomStringConvertible {
    /// A backend of the daemon's: what reaches the sound server.
    public enum Backend: UInt8, Sendable {
        /// No backend: the unit tests' and the engine properties' streams.
        case none
        /// libpulse: PulseAudio, or PipeWire through pipewire-pulse.
        case pulse
        /// The ALSA plugin in each ALSA client, with the daemon as its server.
        case alsa
    }

    /// The backend that reaches the server. A small value, not a name: every stream id carries it, and
    /// the engine hashes and copies ids on every event.
    public var backend: Backend
    /// The instance of its server.
    public var number: UInt32

    public init(backend: Backend, number: UInt32) {
        self.backend = backend
        self.number = number
    }

    /// For streams of no server: the unit tests' and the engine properties' backend streams.
    public static let unnamed = ServerInstance(backend: .none, number: 0)

    public var description: String { "\(backend) \(number)" }
}

/// Identifies one stream the engine follows, typed by what it is: a backend's playback or capture
/// stream (by its server instance and index there), a hook's interruption, a claim, or a fixture's
/// named stream.
///
/// The parts of the daemon hand the engine typed ids and take typed ids back from its commands, so no
/// part builds a name with a prefix and parses it back. ``rawValue`` is the printed form (`12`,
/// `capture-12`, `hook-1-2`, `claim-1`, a fixture's name): logs, `status`, timelines and recorded
/// fixtures show it, and a recorded fixture reads it back as a named stream.
public struct StreamID: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// What the id names.
    public enum Object: Hashable, Sendable {
        /// A fixture's, a benchmark's or a recorded stream, by name.
        case named(String)
        /// A playback stream of the sound backend, by its server instance and its index there: a
        /// PulseAudio sink input (also on pipewire-pulse), or an ALSA plugin stream (``ALSAPluginServer``
        /// numbers them).
        case playback(UInt32, server: ServerInstance)
        /// A capture stream of the sound backend (a source output, an ALSA capture PCM), by server
        /// instance and index.
        case capture(UInt32, server: ServerInstance)
        /// An interruption a control connection began (`begin`): the connection and its count there.
        case hook(client: Int, number: Int)
        /// A control connection's claim of Now Playing (`claim`).
        case claim(client: Int)
    }

    public let object: Object
    public init(_ object: Object) { self.object = object }
    public init(_ name: String) { self.object = .named(name) }
    public init(stringLiteral value: String) { self.object = .named(value) }
    public static func playback(_ index: UInt32, on server: ServerInstance = .unnamed) -> StreamID {
        StreamID(.playback(index, server: server))
    }
    public static func capture(_ index: UInt32, on server: ServerInstance = .unnamed) -> StreamID {
        StreamID(.capture(index, server: server))
    }

    /// The printed form; never parsed back. A backend stream prints as its index alone: one daemon
    /// talks to one server at a time, and logs, `status` and recorded fixtures name streams so.
    public var rawValue: String {
        switch object {
        case let .named(name): name
        case let .playback(index, _): String(index)
        case let .capture(index, _): "capture-\(index)"
        case let .hook(client, number): "hook-\(client)-\(number)"
        case let .claim(client): "claim-\(client)"
        }
    }
    public var description: String { rawValue }

    /// The backend's playback stream this names, if it names one.
    public var playbackIndex: UInt32? {
        if case let .playback(index, _) = object { return index }
        return nil
    }

    /// The server instance of a backend's stream; nil for any other id.
    public var server: ServerInstance? {
        switch object {
        case let .playback(_, server), let .capture(_, server): server
        default: nil
        }
    }

    /// Named streams by name, backend streams by index (numerically), hooks and claims by connection.
    public static func < (lhs: StreamID, rhs: StreamID) -> Bool {
        switch (lhs.object, rhs.object) {
        case let (.named(a), .named(b)): a < b
        case let (.playback(a, x), .playback(b, y)), let (.capture(a, x), .capture(b, y)):
            (a, x.backend.rawValue, x.number) < (b, y.backend.rawValue, y.number)
        case let (.hook(a, m), .hook(b, n)): (a, m) < (b, n)
        case let (.claim(a), .claim(b)): a < b
        default: lhs.rank < rhs.rank
        }
    }

    private var rank: Int {
        switch object {
        case .named: 0
        case .playback: 1
        case .capture: 2
        case .hook: 3
        case .claim: 4
        }
    }
}

/// Identifies a controllable media player: an MPRIS bus name (`org.mpris.MediaPlayer2.mpv`), or a control
/// connection that claimed Now Playing and takes its commands over the socket.
public struct PlayerID: Hashable, Sendable, CustomStringConvertible {
    /// What kind of player.
    public enum Object: Hashable, Sendable {
        /// A player on the session bus, by its MPRIS bus name.
        case mpris(String)
        /// A hook's claim, by its control connection.
        case hook(client: Int)
    }

    public let object: Object
    public init(_ object: Object) { self.object = object }
    /// An MPRIS player by bus name (fixtures name players so).
    public init(_ busName: String) { self.object = .mpris(busName) }

    /// The printed form (the bus name, or `hook:CLIENT`); never parsed back.
    public var rawValue: String {
        switch object {
        case let .mpris(name): name
        case let .hook(client): "hook:\(client)"
        }
    }
    public var description: String { rawValue }

    /// The MPRIS bus name, for a player on the bus.
    public var busName: String? {
        if case let .mpris(name) = object { return name }
        return nil
    }
}

/// A position in a policy or fixture file, printed as `FILE:LINE:COLUMN`.
public struct SourceLocation: Hashable, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: Int
    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }
    public var description: String { "\(file):\(line):\(column)" }
}

/// An error that points at the place in a file that caused it.
public struct LocatedError: Error, Hashable, Sendable, CustomStringConvertible {
    public var location: SourceLocation
    public var message: String
    /// Line breaks and other control characters in `message` (a key or a value quoted from the file,
    /// toml++'s "saw 't<LF>'") are escaped, so that every error stays one `FILE:LINE:COLUMN: message` line.
    /// Messages are cut to this many characters: a value quoted from a file can be a megabyte long,
    /// and an error line that fills screens (or the pipe of a caller that reads after the exit) helps
    /// nobody. The start names the key and what was wrong; the cut says how much was left out.
    public static let longestMessage = 400

    public init(_ location: SourceLocation, _ message: String) {
        self.location = location
        self.message = Self.shortened(Self.oneLine(message))
    }

    static func shortened(_ text: String) -> String {
        guard text.count > longestMessage else { return text }
        return text.prefix(longestMessage) + "… (\(text.count - longestMessage) more characters)"
    }

    static func oneLine(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where isControl(scalar):
                out += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// C0 and C1 control characters and Unicode's line and paragraph separators: each breaks a line for
    /// some reader (NEL, U+0085, does for regular expressions and some terminals; a fuzzed policy had it).
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}" || scalar == "\u{2029}"
    }
    public var description: String { "\(location): \(message)" }
}

/// One or more located errors, reported together so a user fixes a file in one pass.
public struct LocatedErrors: Error, Sendable, CustomStringConvertible {
    public var errors: [LocatedError]
    public init(_ errors: [LocatedError]) { self.errors = errors }
    public var description: String { errors.map(\.description).joined(separator: "\n") }
}
