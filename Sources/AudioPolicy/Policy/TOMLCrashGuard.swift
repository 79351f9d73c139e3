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
/// - a date-time: `parse_time` asserts the character after a date's `T` is a digit
///   (`x = 1979-05-27Tß07:32:00Z`, `x = 1979-05-27T:07`); and a ten-character date-like value, a
///   space and one digit that ends there send the scan on past the end of the value
///   (`x = 1979-05-27 0,`). Neither shape is ever valid TOML where a value starts.
///
/// The scan follows just enough TOML for that: comments, the four kinds of string, where a value
/// starts (after `=`, and where an array expects one), and the brackets of values (an array may span
/// lines). Text before the first syntax error toml++ would report is valid
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
        while index < scalars.count {
            let scalar = scalars[index]
            if valueDue, !["#", "\n", " ", "\t", "\r"].contains(scalar) {
                valueDue = false
                if ["}", "\u{85}", "\u{2028}", "\u{2029}"].contains(scalar) {
                    return (line, index - lineStart + 1, "syntax error in array: expected a value, saw '\(shown(scalar))'")
                }
                if let (offset, message) = dateTimeCrash(in: scalars, at: index) {
                    return (line, index + offset - lineStart + 1, message)
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
            case "=":
                atStatementStart = false
                index += 1
                _ = skipSpaces()
                if let (offset, message) = dateTimeCrash(in: scalars, at: index) {
                    return (line, index + offset - lineStart + 1, message)
                }
            default:
                atStatementStart = false
                index += 1
            }
        }
        return nil
    }

    /// Where a value starting at `start` would abort toml++'s date-time parsing, as an offset from
    /// `start` and a message; nil when it would not.
    ///
    /// The shapes follow toml++ 3.4.0's `parse_value`: it sends a value to `parse_date_time` on the
    /// traits of its characters, and `parse_date_time` reads `YYYY-MM-DD` and `T` from the text itself
    /// before asserting a digit. The space form: a value whose characters other than `_` number ten,
    /// with `-` fifth and eighth, followed by a space and a digit, makes it scan on from the character
    /// after that digit, asserting it does not end a value.
    static func dateTimeCrash(in scalars: [Unicode.Scalar], at start: Int) -> (offset: Int, message: String)? {
        func at(_ offset: Int) -> Unicode.Scalar? {
            start + offset < scalars.count ? scalars[start + offset] : nil
        }
        func isDigit(_ scalar: Unicode.Scalar?) -> Bool { scalar.map { ("0"..."9").contains($0) } ?? false }
        func endsValue(_ scalar: Unicode.Scalar) -> Bool {
            ["]", "}", ",", "#"].contains(scalar) || scalar.properties.isWhitespace
        }
        guard isDigit(at(0)) else { return nil }
        let date = (0..<10).allSatisfy { offset in
            offset == 4 || offset == 7 ? at(offset) == "-" : isDigit(at(offset))
        }
        if date, let separator = at(10), separator == "T" || separator == "t", let hour = at(11), !isDigit(hour) {
            return (11, "syntax error in date-time: expected a 2-digit hour after '\(separator)', saw '\(shown(hour))'")
        }
        var length = 0, characters: [Unicode.Scalar] = []
        while let scalar = at(length), !endsValue(scalar) {
            if scalar != "_" { characters.append(scalar) }
            length += 1
        }
        if characters.count == 10, characters[4] == "-", characters[7] == "-", at(length) == " ",
           isDigit(at(length + 1)), let after = at(length + 2), endsValue(after) {
            return (length + 1, "syntax error in date-time: expected a 2-digit hour after the date and a space, saw '\(at(length + 1)!)' alone")
        }
        return nil
    }

    /// A character as an error message shows it: control characters and spaces escaped.
    private static func shown(_ scalar: Unicode.Scalar) -> String {
        scalar.properties.generalCategory == .control || scalar.properties.isWhitespace
            ? scalar.escaped(asASCII: true) : String(scalar)
    }
}
