import Testing
@testable import AudioPolicy

@Suite("Glob")
struct GlobTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var pattern: String
        var value: String
        var matches: Bool
        var testDescription: String { "\(pattern) \(matches ? "~" : "!~") \(value)" }
        init(_ pattern: String, _ value: String, _ matches: Bool) {
            self.pattern = pattern
            self.value = value
            self.matches = matches
        }
    }

    static let cases: [Case] = [
        // Literals match the whole value, ignoring case.
        Case("music", "music", true),
        Case("music", "Music", true),
        Case("Communication", "communication", true),
        Case("music", "musicbox", false),
        Case("music", "my music", false),
        Case("", "", true),
        Case("", "x", false),
        // `*` is any run of characters, including none.
        Case("*", "", true),
        Case("*", "anything at all", true),
        Case("*podcast*", "org.gnome.Podcasts", true),
        Case("*podcast*", "podcast", true),
        Case("*podcast*", "podcas", false),
        Case("*.cozy", "com.github.geigi.cozy", true),
        Case("*.cozy", "cozy", false),
        Case("a*b*c", "aXXbYYc", true),
        Case("a*b*c", "abcabc", true),
        Case("a*b*c", "acb", false),
        Case("**x", "abx", true),
        Case("spoken*", "spokenAudio", true),
        // `?` is exactly one character.
        Case("mus?c", "music", true),
        Case("mus?c", "musc", false),
        Case("???", "abc", true),
        Case("???", "ab", false),
        // Character classes, ranges and negation.
        Case("[mv]ideo", "video", true),
        Case("[mv]ideo", "Video", true),
        Case("[mv]ideo", "rideo", false),
        Case("a[0-9]", "a7", true),
        Case("a[0-9]", "ax", false),
        Case("a[!0-9]", "ax", true),
        Case("a[!0-9]", "a7", false),
        Case("a[^0-9]", "a7", false),
        Case("[A-Z]x", "qx", true),
        Case("[]]", "]", true),
        Case("[a-]", "-", true),
        // An unterminated class is a literal `[`; a backslash escapes.
        Case("[abc", "[abc", true),
        Case("[abc", "a", false),
        Case(#"\*"#, "*", true),
        Case(#"\*"#, "x", false),
        Case(#"a\?"#, "a?", true),
        // Unicode is compared by character.
        Case("caf?", "café", true),
        Case("*É", "CAFÉ", true),
    ]

    @Test(arguments: cases)
    func matches(_ c: Case) {
        #expect(Glob(c.pattern).matches(c.value) == c.matches)
    }

    @Test("an ASCII pattern on an ASCII value, matched by byte, answers as matching by character does")
    func bytesAgreeWithCharacters() {
        var rng = SystemRandomNumberGenerator()
        let patternPieces = ["*", "?", "a", "B", "c", "[a-c]", "[!b]", "[^A]", ".", "-", "\\*", "[", "]", "z"]
        let textPieces = ["a", "b", "C", "A", ".", "-", "*", "z", "Z", "[", "]", "", "ab", "@", "`", "{"]
        var mismatches: [String] = []
        var matched = 0
        for _ in 0..<20_000 {
            let pattern = (0..<Int.random(in: 0...6, using: &rng)).map { _ in patternPieces.randomElement(using: &rng)! }.joined()
            let value = (0..<Int.random(in: 0...8, using: &rng)).map { _ in textPieces.randomElement(using: &rng)! }.joined()
            let glob = Glob(pattern)
            let fast = glob.matches(value), slow = glob.matchCharacters(value)
            if fast { matched += 1 }
            if fast != slow { mismatches.append("\(pattern) on \(value): \(fast) by byte, \(slow) by character") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
        // Both answers come up often enough for the comparison to mean something.
        #expect(matched > 500 && matched < 19_500, "\(matched) of 20000 matched")
    }

    @Test func describesItselfAsWritten() {
        #expect(Glob("*Podcast*").description == "*Podcast*")
    }
}
