/// Milliseconds on the engine's clock. The engine never reads a clock: every call is given `now`.
public typealias Milliseconds = Int

/// A stream's properties, as the sound server reports them (`media.role`, `application.name`, …).
public typealias Properties = [String: String]

/// Identifies one stream (a PulseAudio sink input, a fixture stream, or a hook's interruption token).
public struct StreamID: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }
    public static func < (lhs: StreamID, rhs: StreamID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Identifies a controllable media player (an MPRIS bus name such as `org.mpris.MediaPlayer2.mpv`).
public struct PlayerID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
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
    public init(_ location: SourceLocation, _ message: String) {
        self.location = location
        self.message = message
    }
    public var description: String { "\(location): \(message)" }
}

/// One or more located errors, reported together so a user fixes a file in one pass.
public struct LocatedErrors: Error, Sendable, CustomStringConvertible {
    public var errors: [LocatedError]
    public init(_ errors: [LocatedError]) { self.errors = errors }
    public var description: String { errors.map(\.description).joined(separator: "\n") }
}
