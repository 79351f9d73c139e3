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

    @Test func describesItselfAsWritten() {
        #expect(Glob("*Podcast*").description == "*Podcast*")
    }
}
