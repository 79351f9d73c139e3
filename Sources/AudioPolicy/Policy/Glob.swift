/// A shell-style pattern (`*`, `?`, `[abc]`, `[!a-z]`) matched case-insensitively against a whole value.
///
/// Every new stream is classified against every rule's patterns, so matching is on the path to each
/// decision: an ASCII pattern is matched against an ASCII value byte by byte, lowercasing as it goes
/// (no copy of the value); anything else by character after Unicode lowercasing. Both give the same
/// answer where both apply (GlobTests checks them against each other).
public struct Glob: Hashable, Sendable, CustomStringConvertible {
    public let pattern: String
    private let characters: [Character]
    /// The lowercased pattern's bytes, when it is all ASCII.
    private let bytes: [UInt8]?

    public init(_ pattern: String) {
        self.pattern = pattern
        let lowered = pattern.lowercased()
        self.characters = Array(lowered)
        self.bytes = lowered.utf8.allSatisfy { $0 < 0x80 } ? Array(lowered.utf8) : nil
    }

    public var description: String { pattern }

    public func matches(_ value: String) -> Bool {
        if let bytes, let answer = Self.matchASCII(bytes, value) { return answer }
        return matchCharacters(value)
    }

    /// By character, after lowercasing the value (any Unicode).
    func matchCharacters(_ value: String) -> Bool {
        Self.match(characters, Array(value.lowercased()), lower: { $0 },
                   symbols: Symbols(star: "*", question: "?", open: "[", close: "]", bang: "!", caret: "^", dash: "-",
                                    backslash: "\\"))
    }

    /// By byte, lowercasing ASCII letters on the way; nil when the value is not all ASCII.
    private static func matchASCII(_ pattern: [UInt8], _ value: String) -> Bool? {
        var value = value
        return value.withUTF8 { text -> Bool? in
            guard text.allSatisfy({ $0 < 0x80 }) else { return nil }
            return match(pattern, text, lower: { $0 &- 0x41 < 26 ? $0 | 0x20 : $0 }, symbols: Self.byteSymbols)
        }
    }

    /// The pattern's special elements, as characters or as bytes.
    private struct Symbols<E: Sendable>: Sendable {
        var star, question, open, close, bang, caret, dash, backslash: E
    }

    private static let byteSymbols = Symbols<UInt8>(
        star: UInt8(ascii: "*"), question: UInt8(ascii: "?"), open: UInt8(ascii: "["), close: UInt8(ascii: "]"),
        bang: UInt8(ascii: "!"), caret: UInt8(ascii: "^"), dash: UInt8(ascii: "-"), backslash: UInt8(ascii: "\\"))

    /// The whole `text` against `pattern` (lowercased), each text element through `lower`: `*` backtracks
    /// to the last star only, which is enough for a whole-value match.
    private static func match<E: Comparable & Sendable, Text: RandomAccessCollection>(
        _ pattern: [E], _ text: Text, lower: (E) -> E, symbols: Symbols<E>
    ) -> Bool where Text.Element == E, Text.Index == Int {
        var p = 0, t = text.startIndex
        var starP = -1, starT = 0
        while t < text.endIndex {
            let c = lower(text[t])
            if p < pattern.count, pattern[p] == symbols.star {
                starP = p
                starT = t
                p += 1
            } else if p < pattern.count, let next = matchOne(pattern, at: p, c, symbols) {
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
        while p < pattern.count, pattern[p] == symbols.star { p += 1 }
        return p == pattern.count
    }

    /// Matches one element at pattern index `p`; returns the index after the pattern element.
    private static func matchOne<E: Comparable & Sendable>(_ pattern: [E], at p: Int, _ c: E, _ s: Symbols<E>) -> Int? {
        let element = pattern[p]
        if element == s.question { return p + 1 }
        if element == s.open {
            var i = p + 1
            let negate = i < pattern.count && (pattern[i] == s.bang || pattern[i] == s.caret)
            if negate { i += 1 }
            var matched = false
            var first = true
            while i < pattern.count, pattern[i] != s.close || first {
                first = false
                if i + 2 < pattern.count, pattern[i + 1] == s.dash, pattern[i + 2] != s.close {
                    if pattern[i] <= c && c <= pattern[i + 2] { matched = true }
                    i += 3
                } else {
                    if pattern[i] == c { matched = true }
                    i += 1
                }
            }
            guard i < pattern.count else { return element == c ? p + 1 : nil } // unterminated: literal
            return matched != negate ? i + 1 : nil
        }
        if element == s.backslash, p + 1 < pattern.count {
            return pattern[p + 1] == c ? p + 2 : nil
        }
        return element == c ? p + 1 : nil
    }
}
