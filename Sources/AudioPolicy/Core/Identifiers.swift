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
