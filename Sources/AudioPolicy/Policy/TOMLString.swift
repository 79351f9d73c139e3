/// TOML basic strings, written: what error messages name keys with, and what `record` and the
/// property tests' shrinker write fixtures with.
enum TOMLString {
    /// `text` in double quotes, with quotes, backslashes and control characters escaped, so that any
    /// text (an app's name is whatever the app says) reads back as itself.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
