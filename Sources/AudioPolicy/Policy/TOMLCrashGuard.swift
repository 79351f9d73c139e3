/// Finds the places that crash toml++ 3.4.0 (the copy inside TOMLKit 0.6), so they are reported as
/// syntax errors before the text reaches it.
///
/// TOMLKit builds toml++ with assertions on, in debug and release alike, and two of its parser's
/// assertions can be reached from bad input, aborting the process (`audio-policyd check`, `test`, and
/// the daemon loading or reloading a policy):
///
/// - a table header: `parse_key` is called on whatever follows `[` (or `[[`) and the spaces after it,
///   and asserts it is a key's first character: `[` alone on a line, `[#`, `[=`, `[[[a]]]`.
///   (Fixed upstream in marzer/tomlplusplus#301, not in a release TOMLKit uses yet.)
/// - an array: where a value is due (after `[` or `,`, spaces, line breaks and comments), `parse_value`
///   asserts the character does not end a value, which `}` and the Unicode line breaks U+0085,
///   U+2028 and U+2029 do: `x = [}]`, `x = [1, }]`.
///
/// The scan follows just enough TOML for that: comments, the four kinds of string, and the brackets of
/// values (an array may span lines). Text before the first syntax error toml++ would report is valid
/// TOML, which the scan follows exactly, so it finds the first crashing place toml++ would reach; past
/// an earlier error it may report one toml++ would never reach, which is still a real syntax error at
/// a real place.
enum TOMLCrashGuard {
    /// The 1-based line and column (in Unicode scalars) of the character that would crash toml++, and
    /// a message for it; nil when there is none.
    static func check(_ text: String) -> (line: Int, column: Int, message: String)? {
        var scalars = Array(text.unicodeScalars)
        if scalars.first == "\u{FEFF}" { scalars.removeFirst() }
        var index = 0, line = 1, lineStart = 0
        var open: [Unicode.Scalar] = [] // the `[` and `{` of values still open
        var atStatementStart = true // only spaces and tabs since the last newline outside a value
        var valueDue = false // in an array, after `[` or `,`

        func at(_ offset: Int) -> Unicode.Scalar? {
            index + offset < scalars.count ? scalars[index + offset] : nil
        }
        func advance() {
            if scalars[index] == "\n" {
                line += 1
                lineStart = index + 1
            }
            index += 1
        }
        /// Skips a string opened at `index` by `quote` (`"` or `'`), single- or multi-line.
        func skipString(_ quote: Unicode.Scalar) {
            let multiline = at(1) == quote && at(2) == quote
            index += multiline ? 3 : 1
            while index < scalars.count {
                let scalar = scalars[index]
                if quote == "\"", scalar == "\\" {
                    advance()
                    if index < scalars.count { advance() }
                    continue
                }
                if !multiline, scalar == "\n" { return } // unterminated: toml++ stops here
                if scalar == quote, !multiline || (at(1) == quote && at(2) == quote) {
                    index += multiline ? 3 : 1
                    return
                }
                advance()
            }
        }
        func isKeyStart(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", "_", "-", "\"", "'": true
            default: false
            }
        }
        func skipSpaces() -> Bool {
            var skipped = false
            while let scalar = at(0), scalar == " " || scalar == "\t" {
                index += 1
                skipped = true
            }
            return skipped
        }
        func shown(_ scalar: Unicode.Scalar) -> String {
            scalar.properties.generalCategory == .control || scalar.properties.isWhitespace
                ? scalar.escaped(asASCII: true) : String(scalar)
        }

        while index < scalars.count {
            let scalar = scalars[index]
            if valueDue, !["#", "\n", " ", "\t", "\r"].contains(scalar) {
                valueDue = false
                if ["}", "\u{85}", "\u{2028}", "\u{2029}"].contains(scalar) {
                    return (line, index - lineStart + 1, "syntax error in array: expected a value, saw '\(shown(scalar))'")
                }
            }
            switch scalar {
            case "#":
                while let next = at(0), next != "\n" { index += 1 }
            case "\"", "'":
                skipString(scalar)
                atStatementStart = false
            case "\n":
                if open.isEmpty { atStatementStart = true }
                advance()
            case " ", "\t", "\r":
                index += 1
            case "[" where open.isEmpty && atStatementStart:
                // A table header: `[` or `[[`, spaces, then a key, or `]` (toml++ reports that itself).
                atStatementStart = false
                index += 1
                let spaced = skipSpaces()
                if at(0) == "[", !spaced {
                    index += 1
                    _ = skipSpaces()
                }
                if let next = at(0), next != "]", !(next == "[" && spaced), !isKeyStart(next) {
                    return (line, index - lineStart + 1,
                            "syntax error in table header: expected a key after '[', saw '\(shown(next))'")
                }
            case "[", "{":
                open.append(scalar)
                valueDue = scalar == "["
                atStatementStart = false
                index += 1
            case "]", "}":
                _ = open.popLast()
                atStatementStart = false
                index += 1
            case ",":
                valueDue = open.last == "["
                atStatementStart = false
                index += 1
            default:
                atStatementStart = false
                index += 1
            }
        }
        return nil
    }
}
