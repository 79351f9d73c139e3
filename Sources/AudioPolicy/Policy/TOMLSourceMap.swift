/// Where keys, values and table headers stand in a TOML text, so errors can point at them.
///
/// TOMLKit reports positions only for syntax errors. This scanner walks text that TOMLKit has already
/// accepted and records, under each ``TOMLKeyPath``, where the key starts, where its value starts, and
/// where a `[table]` or `[[array]]` header stands (the `k`-th `[[rule]]` is `rule[k]`). It does not
/// diagnose anything: on text that is not valid TOML it records what it can and keeps going.
///
/// Lines and columns are 1-based; columns count characters (Unicode scalars), as TOMLKit's do.
public struct TOMLSourceMap: Sendable {
    public let file: String
    /// Where each key is written; for a dotted key `a.b.c`, each component under its own path.
    public private(set) var keys: [TOMLKeyPath: SourceLocation] = [:]
    /// Where each value starts: after `=`, or the element itself inside an array.
    public private(set) var values: [TOMLKeyPath: SourceLocation] = [:]
    /// Where each `[table]` / `[[array]]` header starts (its first `[`).
    public private(set) var headers: [TOMLKeyPath: SourceLocation] = [:]

    public init(text: String, file: String) {
        self.file = file
        var scanner = Scanner(text: text, file: file)
        scanner.scanDocument()
        keys = scanner.keys
        values = scanner.values
        headers = scanner.headers
    }

    // MARK: Looking up

    public func key(_ path: TOMLKeyPath) -> SourceLocation? { keys[path] }
    public func value(_ path: TOMLKeyPath) -> SourceLocation? { values[path] }
    public func header(_ path: TOMLKeyPath) -> SourceLocation? { headers[path] }

    /// The place to blame a key for: the key, else its header, else its value, else the nearest ancestor's.
    public func keyLocation(_ path: TOMLKeyPath) -> SourceLocation {
        nearest(path) { keys[$0] ?? headers[$0] ?? values[$0] }
    }

    /// The place to blame a value for: the value, else its header, else its key, else the nearest ancestor's.
    public func valueLocation(_ path: TOMLKeyPath) -> SourceLocation {
        nearest(path) { values[$0] ?? headers[$0] ?? keys[$0] }
    }

    /// The place to blame a whole table for: its header, else where it is written as a value or key.
    public func tableLocation(_ path: TOMLKeyPath) -> SourceLocation {
        nearest(path) { headers[$0] ?? values[$0] ?? keys[$0] }
    }

    private func nearest(_ path: TOMLKeyPath, _ lookup: (TOMLKeyPath) -> SourceLocation?) -> SourceLocation {
        var path = path
        while true {
            if let found = lookup(path) { return found }
            if path.components.isEmpty { return SourceLocation(file: file, line: 1, column: 1) }
            path = path.parent
        }
    }
}

// MARK: - Scanner

extension TOMLSourceMap {
    /// A single pass over the text, tracking line and column.
    private struct Scanner {
        private let text: [Unicode.Scalar]
        private let file: String
        private var index = 0
        private var line = 1
        private var column = 1
        /// How many `[[array]]` tables each array path has so far, to number the next one.
        private var arrayTableCounts: [TOMLKeyPath: Int] = [:]

        var keys: [TOMLKeyPath: SourceLocation] = [:]
        var values: [TOMLKeyPath: SourceLocation] = [:]
        var headers: [TOMLKeyPath: SourceLocation] = [:]

        init(text: String, file: String) {
            // A byte-order mark is not a column.
            self.text = Array(text.unicodeScalars.drop(while: { $0 == "\u{FEFF}" }))
            self.file = file
        }

        // MARK: Structure

        mutating func scanDocument() {
            var table = TOMLKeyPath.root
            while true {
                skipTrivia(acrossLines: true)
                guard let scalar = current else { return }
                if scalar == "[" {
                    table = scanHeader()
                } else {
                    scanKeyValue(in: table)
                }
            }
        }

        /// `[a.b]` or `[[a.b]]`; returns the path of the table it opens.
        private mutating func scanHeader() -> TOMLKeyPath {
            let start = location
            advance()
            let isArray = current == "["
            if isArray { advance() }
            let parts = scanKey()
            skipTrivia(acrossLines: false)
            if current == "]" { advance() }
            if isArray, current == "]" { advance() }

            var path = TOMLKeyPath.root
            for (offset, part) in parts.prefix(Self.maxKeyDepth).enumerated() {
                path = path.appending(part.name)
                if keys[path] == nil { keys[path] = part.location }
                if isArray, offset == parts.count - 1 {
                    let count = arrayTableCounts[path, default: 0]
                    arrayTableCounts[path] = count + 1
                    path = path.appending(count)
                } else if let count = arrayTableCounts[path] {
                    // `[rule.match]` after `[[rule]]` extends the last rule.
                    path = path.appending(count - 1)
                }
            }
            if headers[path] == nil { headers[path] = start }
            return path
        }

        /// Components of a dotted key or header recorded; deeper ones are blamed on this depth. Every
        /// component's path is a key of its own, so a 10,000-part key (`k.k.k…`, 20 kB) took 1.2 GB and
        /// 5.5 s (release) to map; no policy or fixture key is more than a few deep.
        static let maxKeyDepth = 64

        /// `key = value`, where key may be dotted; records every component and the value.
        private mutating func scanKeyValue(in table: TOMLKeyPath) {
            let parts = scanKey()
            skipTrivia(acrossLines: false)
            if current == "=" { advance() }
            skipTrivia(acrossLines: false)
            var path = table
            for part in parts.prefix(Self.maxKeyDepth) {
                path = path.appending(part.name)
                if keys[path] == nil { keys[path] = part.location }
            }
            scanValue(at: path)
        }

        /// A possibly dotted key; each component with where it starts. Always consumes something.
        private mutating func scanKey() -> [(name: String, location: SourceLocation)] {
            var parts: [(name: String, location: SourceLocation)] = []
            while true {
                skipTrivia(acrossLines: false)
                let start = location
                let before = index
                let name: String
                switch current {
                case "\"": name = scanBasicString()
                case "'": name = scanLiteralString()
                default:
                    var bare = ""
                    while let scalar = current, TOMLKeyPath.isBareKeyScalar(scalar) {
                        bare.unicodeScalars.append(scalar)
                        advance()
                    }
                    name = bare
                }
                if index == before {
                    // Not a key at all (invalid text): step over it so the scan always ends.
                    if current != nil { advance() }
                    return parts
                }
                parts.append((name, start))
                skipTrivia(acrossLines: false)
                guard current == "." else { return parts }
                advance()
            }
        }

        /// Arrays and inline tables nested deeper than this are stepped over without recording what is
        /// inside: the scan recurses once per level, and toml++ accepts 256 levels, which overflowed the
        /// stack of a test thread (a fuzzed policy did). No policy or fixture nests more than three.
        static let maxNesting = 32
        private var nesting = 0

        private mutating func scanValue(at path: TOMLKeyPath) {
            values[path] = location
            if current == "[" || current == "{", nesting >= Self.maxNesting {
                skipNested()
                return
            }
            switch current {
            case "\"": _ = scanBasicString()
            case "'": _ = scanLiteralString()
            case "[": scanArray(at: path)
            case "{": scanInlineTable(at: path)
            default:
                // Numbers, booleans, dates (which may contain a space): up to what ends a value.
                while let scalar = current, !["\n", "\r", ",", "]", "}", "#"].contains(scalar) { advance() }
            }
        }

        private mutating func scanArray(at path: TOMLKeyPath) {
            nesting += 1
            defer { nesting -= 1 }
            advance()
            var count = 0
            while true {
                skipTrivia(acrossLines: true)
                guard let scalar = current else { return }
                switch scalar {
                case "]":
                    advance()
                    return
                case ",":
                    advance()
                default:
                    let before = index
                    scanValue(at: path.appending(count))
                    count += 1
                    if index == before { advance() }
                }
            }
        }

        private mutating func scanInlineTable(at path: TOMLKeyPath) {
            nesting += 1
            defer { nesting -= 1 }
            advance()
            while true {
                // TOML 1.0 keeps inline tables on one line; accepting newlines costs nothing.
                skipTrivia(acrossLines: true)
                guard let scalar = current else { return }
                switch scalar {
                case "}":
                    advance()
                    return
                case ",":
                    advance()
                default:
                    scanKeyValue(in: path)
                }
            }
        }

        /// Steps over the array or inline table at the cursor, nested ones and strings included, without
        /// recursing.
        private mutating func skipNested() {
            var depth = 0
            while let scalar = current {
                switch scalar {
                case "\"": _ = scanBasicString()
                case "'": _ = scanLiteralString()
                case "#": skipTrivia(acrossLines: false)
                case "[", "{":
                    depth += 1
                    advance()
                case "]", "}":
                    depth -= 1
                    advance()
                    if depth == 0 { return }
                default: advance()
                }
            }
        }

        // MARK: Strings

        /// `"…"` or `"""…"""`, at the opening quote; returns the decoded text.
        private mutating func scanBasicString() -> String {
            let multiline = peek(1) == "\"" && peek(2) == "\""
            advance(by: multiline ? 3 : 1)
            var text = ""
            if multiline, current == "\n" { advance() }
            while let scalar = current {
                switch scalar {
                case "\\":
                    advance()
                    text += scanEscape(multiline: multiline)
                case "\"" where !multiline:
                    advance()
                    return text
                case "\"" where peek(1) == "\"" && peek(2) == "\"":
                    // `""""` or `"""""`: up to two quotes just before the delimiter are content.
                    var run = 0
                    while current == "\"" {
                        run += 1
                        advance()
                    }
                    text += String(repeating: "\"", count: max(0, run - 3))
                    return text
                default:
                    text.unicodeScalars.append(scalar)
                    advance()
                }
            }
            return text
        }

        /// After a backslash in a basic string.
        private mutating func scanEscape(multiline: Bool) -> String {
            guard let scalar = current else { return "" }
            advance()
            switch scalar {
            case "b": return "\u{08}"
            case "t": return "\t"
            case "n": return "\n"
            case "f": return "\u{0C}"
            case "r": return "\r"
            case "e": return "\u{1B}"
            case "\"": return "\""
            case "\\": return "\\"
            case "x": return scanHexScalar(digits: 2)
            case "u": return scanHexScalar(digits: 4)
            case "U": return scanHexScalar(digits: 8)
            case " ", "\t", "\r", "\n":
                guard multiline else { return String(scalar) }
                // Line-ending backslash: drop the newline and the whitespace after it.
                while let next = current, [" ", "\t", "\r", "\n"].contains(next) { advance() }
                return ""
            default:
                return String(scalar)
            }
        }

        private mutating func scanHexScalar(digits: Int) -> String {
            var hex = ""
            for _ in 0..<digits {
                guard let scalar = current, scalar.properties.isASCIIHexDigit else { break }
                hex.unicodeScalars.append(scalar)
                advance()
            }
            guard let value = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(value) else { return "" }
            return String(scalar)
        }

        /// `'…'` or `'''…'''`, at the opening quote; returns the text.
        private mutating func scanLiteralString() -> String {
            let multiline = peek(1) == "'" && peek(2) == "'"
            advance(by: multiline ? 3 : 1)
            var text = ""
            if multiline, current == "\n" { advance() }
            while let scalar = current {
                if scalar == "'", !multiline {
                    advance()
                    return text
                }
                if scalar == "'", peek(1) == "'", peek(2) == "'" {
                    var run = 0
                    while current == "'" {
                        run += 1
                        advance()
                    }
                    text += String(repeating: "'", count: max(0, run - 3))
                    return text
                }
                text.unicodeScalars.append(scalar)
                advance()
            }
            return text
        }

        // MARK: Characters

        private var current: Unicode.Scalar? { index < text.count ? text[index] : nil }

        private func peek(_ offset: Int) -> Unicode.Scalar? {
            index + offset < text.count ? text[index + offset] : nil
        }

        private var location: SourceLocation { SourceLocation(file: file, line: line, column: column) }

        private mutating func advance(by count: Int = 1) {
            for _ in 0..<count where index < text.count {
                if text[index] == "\n" {
                    line += 1
                    column = 1
                } else {
                    column += 1
                }
                index += 1
            }
        }

        /// Spaces, tabs and comments; newlines too when `acrossLines`.
        private mutating func skipTrivia(acrossLines: Bool) {
            while let scalar = current {
                switch scalar {
                case " ", "\t", "\r":
                    advance()
                case "\n" where acrossLines:
                    advance()
                case "#":
                    while let next = current, next != "\n" { advance() }
                default:
                    return
                }
            }
        }
    }
}
