/// A shell-style pattern (`*`, `?`, `[abc]`, `[!a-z]`) matched case-insensitively against a whole value.
public struct Glob: Hashable, Sendable, CustomStringConvertible {
    public let pattern: String
    private let scalars: [Character]

    public init(_ pattern: String) {
        self.pattern = pattern
        self.scalars = Array(pattern.lowercased())
    }

    public var description: String { pattern }

    public func matches(_ value: String) -> Bool {
        let text = Array(value.lowercased())
        var p = 0, t = 0
        var starP = -1, starT = 0
        while t < text.count {
            if p < scalars.count, scalars[p] == "*" {
                starP = p
                starT = t
                p += 1
            } else if p < scalars.count, let next = matchOne(at: p, text[t]) {
                p = next
                t += 1
            } else if starP >= 0 {
                p = starP + 1
                starT += 1
                t = starT
            } else {
                return false
            }
        }
        while p < scalars.count, scalars[p] == "*" { p += 1 }
        return p == scalars.count
    }

    /// Matches one character at pattern index `p`; returns the index after the pattern element.
    private func matchOne(at p: Int, _ c: Character) -> Int? {
        switch scalars[p] {
        case "?": return p + 1
        case "[":
            var i = p + 1
            let negate = i < scalars.count && (scalars[i] == "!" || scalars[i] == "^")
            if negate { i += 1 }
            var matched = false
            var first = true
            while i < scalars.count, scalars[i] != "]" || first {
                first = false
                if i + 2 < scalars.count, scalars[i + 1] == "-", scalars[i + 2] != "]" {
                    if scalars[i] <= c && c <= scalars[i + 2] { matched = true }
                    i += 3
                } else {
                    if scalars[i] == c { matched = true }
                    i += 1
                }
            }
            guard i < scalars.count else { return scalars[p] == c ? p + 1 : nil } // unterminated: literal
            return matched != negate ? i + 1 : nil
        case "\\" where p + 1 < scalars.count:
            return scalars[p + 1] == c ? p + 2 : nil
        case let literal:
            return literal == c ? p + 1 : nil
        }
    }
}
