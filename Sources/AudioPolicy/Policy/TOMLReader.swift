import TOMLKit

/// Reads typed values out of parsed TOML for the policy and fixture loaders, collecting every error
/// with its place in the file instead of stopping at the first.
///
/// Each getter returns nil both when the key is absent and when its value is wrong; in the second case
/// it has already recorded an error pointing at the value.
final class TOMLReader {
    let map: TOMLSourceMap
    private(set) var errors: [LocatedError] = []

    private init(map: TOMLSourceMap) { self.map = map }

    /// Parses `text`, or throws its syntax error at the position TOMLKit reports.
    static func parse(text: String, file: String) throws(LocatedErrors) -> (TOMLTable, TOMLReader) {
        if let crash = TOMLCrashGuard.check(text) { // toml++ would abort on it
            throw LocatedErrors([LocatedError(SourceLocation(file: file, line: crash.line, column: crash.column),
                                              crash.message)])
        }
        let root: TOMLTable
        do {
            root = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            let location = SourceLocation(
                file: file, line: max(1, error.source.begin.line), column: max(1, error.source.begin.column))
            throw LocatedErrors([LocatedError(location, syntaxErrorMessage(error.description))])
        } catch {
            throw LocatedErrors([LocatedError(SourceLocation(file: file, line: 1, column: 1), "\(error)")])
        }
        return (root, TOMLReader(map: TOMLSourceMap(text: text, file: file)))
    }

    /// toml++'s `Error while parsing key-value pair: …` as `syntax error in key-value pair: …`.
    static func syntaxErrorMessage(_ description: String) -> String {
        let prefix = "Error while parsing "
        if description.hasPrefix(prefix) { return "syntax error in " + description.dropFirst(prefix.count) }
        return "syntax error: " + lowercasingFirst(description)
    }

    // MARK: Errors

    func fail(_ location: SourceLocation, _ message: String) {
        errors.append(LocatedError(location, message))
    }

    /// Throws what was recorded, in file order, if anything was.
    func throwIfFailed() throws(LocatedErrors) {
        guard !errors.isEmpty else { return }
        var seen = Set<LocatedError>()
        let unique = errors.filter { seen.insert($0).inserted }
        throw LocatedErrors(unique.enumerated().sorted { lhs, rhs in
            let (l, r) = (lhs.element.location, rhs.element.location)
            return (l.line, l.column, lhs.offset) < (r.line, r.column, rhs.offset)
        }.map(\.element))
    }

    // MARK: Keys

    /// The table's keys in the order they are written (TOMLKit sorts them).
    func keys(of table: TOMLTable, at path: TOMLKeyPath) -> [String] {
        table.keys.sorted { lhs, rhs in
            let l = map.keyLocation(path.appending(lhs)), r = map.keyLocation(path.appending(rhs))
            return (l.line, l.column, lhs) < (r.line, r.column, rhs)
        }
    }

    /// Records an error for each key of `table` not in `allowed`, at the key.
    func checkKeys(_ table: TOMLTable, at path: TOMLKeyPath, allowed: [String], in context: String) {
        // Put the keys in file order only when there is something to report: most tables are fine.
        guard table.keys.contains(where: { !allowed.contains($0) }) else { return }
        for key in keys(of: table, at: path) where !allowed.contains(key) {
            let hint = closest(to: key, in: allowed).map { " (did you mean `\($0)`?)" } ?? ""
            fail(map.keyLocation(path.appending(key)),
                 "unknown key `\(key)` in \(context)\(hint); allowed keys: \(allowed.joined(separator: ", "))")
        }
    }

    // MARK: Values

    func string(_ table: TOMLTable, _ key: String, at path: TOMLKeyPath) -> String? {
        guard let value = table[key] else { return nil }
        guard let string = value.string else {
            return mistyped(value, path.appending(key), "`\(key)` must be a string")
        }
        return string
    }

    func bool(_ table: TOMLTable, _ key: String, at path: TOMLKeyPath) -> Bool? {
        guard let value = table[key] else { return nil }
        guard let bool = value.bool else {
            return mistyped(value, path.appending(key), "`\(key)` must be true or false")
        }
        return bool
    }

    func table(_ table: TOMLTable, _ key: String, at path: TOMLKeyPath, expected: String) -> TOMLTable? {
        guard let value = table[key] else { return nil }
        guard let result = value.table else { return mistyped(value, path.appending(key), expected) }
        return result
    }

    func array(_ table: TOMLTable, _ key: String, at path: TOMLKeyPath, expected: String) -> TOMLArray? {
        guard let value = table[key] else { return nil }
        guard let result = value.array else { return mistyped(value, path.appending(key), expected) }
        return result
    }

    /// A whole number of milliseconds, 0 or more.
    func milliseconds(_ table: TOMLTable, _ key: String, at path: TOMLKeyPath) -> Milliseconds? {
        guard let value = table[key] else { return nil }
        guard let int = value.int else {
            return mistyped(value, path.appending(key), "`\(key)` must be a whole number of ms")
        }
        guard int >= 0 else { return invalid(path.appending(key), "`\(key)` must not be negative, got \(int)") }
        guard int <= Self.maxMilliseconds else { return tooLong(key, path, "\(int)") }
        return int
    }

    /// The longest time a policy or fixture may give: a day. The engine adds times to its clock, so
    /// longer ones (a `grace` of 9223372036854775807) would overflow it, and trap, when used.
    static let maxMilliseconds: Milliseconds = 86_400_000

    private func tooLong<T>(_ key: String, _ path: TOMLKeyPath, _ written: String) -> T? {
        invalid(path.appending(key), "`\(key)` must be at most \(Self.maxMilliseconds) ms (a day), got \(written)")
    }

    /// An integer or a float.
    func number(_ table: TOMLTable, _ key: String, at path: TOMLKeyPath) -> Double? {
        guard let value = table[key] else { return nil }
        if let int = value.int { return Double(int) }
        if let double = value.double { return double }
        return mistyped(value, path.appending(key), "`\(key)` must be a number")
    }

    /// Milliseconds as an integer, or a string with a unit: `"500ms"`, `"1.5s"`.
    func duration(_ table: TOMLTable, _ key: String, at path: TOMLKeyPath) -> Milliseconds? {
        guard let value = table[key] else { return nil }
        let expected = "`\(key)` must be a duration in ms (integer) or a string like \"1.5s\""
        if let int = value.int {
            guard int >= 0 else { return invalid(path.appending(key), "`\(key)` must not be negative, got \(int)") }
            guard int <= Self.maxMilliseconds else { return tooLong(key, path, "\(int)") }
            return int
        }
        guard let string = value.string else { return mistyped(value, path.appending(key), expected) }
        guard let ms = Self.parseDuration(string) else {
            return invalid(path.appending(key), "\(expected), got \"\(string)\"")
        }
        guard ms <= Self.maxMilliseconds else { return tooLong(key, path, "\"\(string)\"") }
        return ms
    }

    /// A level in dB (`"-14 dB"`, -60…0) or a linear factor (0 < x ≤ 1).
    /// `value` (read from `key` of the table at `path`) with where it was written, for the merge's errors.
    func written<T>(_ value: T?, _ key: String, at path: TOMLKeyPath) -> Written<T>? {
        value.map { Written($0, at: map.valueLocation(path.appending(key))) }
    }

    /// The top-level table `[name]`, its keys checked against `allowed`; nil (and an error if it is
    /// there but no table) when the file has none.
    func section(_ root: TOMLTable, _ name: String, allowed: [String]) -> TOMLTable? {
        guard let table = table(root, name, at: .root, expected: "`\(name)` must be a table") else { return nil }
        checkKeys(table, at: TOMLKeyPath([.key(name)]), allowed: allowed, in: "[\(name)]")
        return table
    }

    func level(_ table: TOMLTable, _ key: String, at path: TOMLKeyPath,
               lowest: Double = Level.floorDecibels) -> Level? {
        guard let value = table[key] else { return nil }
        let expected = "`\(key)` must be a level in dB like \"-14 dB\" or a linear factor like 0.2"
        if let linear = value.double ?? value.int.map(Double.init) {
            guard linear >= Level(decibels: lowest).linear, linear <= 1 else {
                let written = value.int.map(String.init) ?? "\(linear)"
                return invalid(path.appending(key),
                               "`\(key)` as a linear factor must be above 0 and at most 1, got \(written)")
            }
            return Level(linear: linear)
        }
        guard let string = value.string else { return mistyped(value, path.appending(key), expected) }
        guard let decibels = Self.parseDecibels(string) else {
            return invalid(path.appending(key), "\(expected), got \"\(string)\"")
        }
        guard decibels >= lowest, decibels <= 0 else {
            return invalid(path.appending(key),
                           "`\(key)` must be between \(Int(lowest)) dB and 0 dB, got \"\(string)\"")
        }
        return Level(decibels: decibels)
    }

    /// Records `message, got TYPE` at the value; returns nil for the caller to pass on.
    func mistyped<T>(_ value: TOMLValueConvertible, _ path: TOMLKeyPath, _ message: String) -> T? {
        invalid(path, "\(message), got \(Self.typeName(value))")
    }

    /// Records `message` at the value at `path`; returns nil for the caller to pass on.
    func invalid<T>(_ path: TOMLKeyPath, _ message: String) -> T? {
        fail(map.valueLocation(path), message)
        return nil
    }

    // MARK: Parsing

    static func typeName(_ value: TOMLValueConvertible) -> String {
        switch value.type {
        case .table: "table"
        case .array: "array"
        case .string: "string"
        case .int: "integer"
        case .double: "float"
        case .bool: "boolean"
        case .date: "date"
        case .time: "time"
        case .dateTime: "date-time"
        }
    }

    /// `"500ms"`, `"500 ms"`, `"1.5s"` → ms; nil when it is none of those, or negative.
    static func parseDuration(_ text: String) -> Milliseconds? {
        let compact = String(text.lowercased().filter { $0 != " " })
        let (number, factor): (Substring, Double) =
            compact.hasSuffix("ms") ? (compact.dropLast(2), 1) :
            compact.hasSuffix("s") ? (compact.dropLast(1), 1000) : ("", 0)
        guard let value = Double(number), value.isFinite, value >= 0, number.first != "+" else { return nil }
        // Past Int's range the conversion traps ("1e19ms"); anything this long is rejected as too long.
        return Milliseconds(exactly: min((value * factor).rounded(), Double(maxMilliseconds) + 1))
    }

    /// `"-14 dB"`, `"-14dB"`, `"0 db"` → dB; nil when it is none of those.
    static func parseDecibels(_ text: String) -> Double? {
        let compact = String(text.lowercased().filter { $0 != " " })
        guard compact.hasSuffix("db"), let value = Double(compact.dropLast(2)), value.isFinite else { return nil }
        return value
    }
}

// MARK: - Wording

func lowercasingFirst(_ text: String) -> String {
    guard let first = text.first else { return text }
    return first.lowercased() + text.dropFirst()
}

/// The candidate closest to `name` if it is close enough to be a likely typo.
///
/// Only a distance of 2 or less counts, and two lengths that differ by more already set it higher: such
/// a candidate is not measured (the table costs their lengths' product; the loader fuzz tests' 100 kB
/// key took 5–6 s of a debug build against every known key).
func closest(to name: String, in candidates: [String]) -> String? {
    let lowered = name.lowercased()
    let length = lowered.count
    let scored = candidates.compactMap { candidate -> (String, Int)? in
        let other = candidate.lowercased()
        guard abs(other.count - length) <= 2 else { return nil }
        return (candidate, editDistance(lowered, other))
    }
    guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 > 0 else { return nil }
    return best.1 <= 2 && best.1 * 2 < max(name.count, best.0.count) ? best.0 : nil
}

/// Edits (insert, delete, substitute, swap neighbours) that turn `a` into `b`.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a), b = Array(b)
    guard !a.isEmpty else { return b.count }
    guard !b.isEmpty else { return a.count }
    var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
    for i in 0...a.count { d[i][0] = i }
    for j in 0...b.count { d[0][j] = j }
    for i in 1...a.count {
        for j in 1...b.count {
            let cost = a[i - 1] == b[j - 1] ? 0 : 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
            }
        }
    }
    return d[a.count][b.count]
}
