import Glibc
import Testing
@testable import AudioPolicy

/// A closure for a thread of our own.
private final class ThreadBody {
    let run: () -> Void
    init(_ run: @escaping () -> Void) { self.run = run }
}

@Suite("TOMLSourceMap")
struct TOMLSourceMapTests {
    /// One line of each shape the scanner must get right; positions below are checked by hand.
    static let text = #"""
        # a comment [not.a.table]
        title = "a # not a comment"
        [class.short]   # comment
        duck = "-14 dB"
        "quoted.key" = 1
        a.b . c = 'lit \'
        [[rule]]
        match = { "media.role" = ["phone", "Comm"], app = "x" }
        [[rule]]  # second
        name = """
        multi "" line \""" # not a comment
        """
        match.app = [
          "a", # ] , comment
          ["n1", 'n2'],
          { k = 1 },
        ]
        [rule.extra]
        k = 1979-05-27 07:32:00Z
        [[rule.sub]]
        x = 1
        [[rule.sub]]
        esc = "a\"b\u00e9"
        'lit key' = "v"
        [ spaced . "h.k" ]
        "ü" = ["é", "x"]
        x = 2
        """#

    static let map = TOMLSourceMap(text: text, file: "t.toml")

    struct Case: CustomTestStringConvertible, Sendable {
        var path: TOMLKeyPath
        var key: String?
        var value: String?
        var header: String?
        var testDescription: String { path.description }
    }

    static let cases: [Case] = [
        Case(path: ["title"], key: "2:1", value: "2:9"),
        Case(path: ["class"], key: "3:2"),
        Case(path: ["class", "short"], key: "3:8", header: "3:1"),
        Case(path: ["class", "short", "duck"], key: "4:1", value: "4:8"),
        Case(path: ["class", "short", "quoted.key"], key: "5:1", value: "5:16"),
        Case(path: ["class", "short", "a"], key: "6:1"),
        Case(path: ["class", "short", "a", "b"], key: "6:3"),
        Case(path: ["class", "short", "a", "b", "c"], key: "6:7", value: "6:11"),
        Case(path: ["rule"], key: "7:3"),
        Case(path: ["rule", 0], header: "7:1"),
        Case(path: ["rule", 0, "match"], key: "8:1", value: "8:9"),
        Case(path: ["rule", 0, "match", "media.role"], key: "8:11", value: "8:26"),
        Case(path: ["rule", 0, "match", "media.role", 0], value: "8:27"),
        Case(path: ["rule", 0, "match", "media.role", 1], value: "8:36"),
        Case(path: ["rule", 0, "match", "app"], key: "8:45", value: "8:51"),
        Case(path: ["rule", 1], header: "9:1"),
        Case(path: ["rule", 1, "name"], key: "10:1", value: "10:8"),
        Case(path: ["rule", 1, "match"], key: "13:1"),
        Case(path: ["rule", 1, "match", "app"], key: "13:7", value: "13:13"),
        Case(path: ["rule", 1, "match", "app", 0], value: "14:3"),
        Case(path: ["rule", 1, "match", "app", 1], value: "15:3"),
        Case(path: ["rule", 1, "match", "app", 1, 0], value: "15:4"),
        Case(path: ["rule", 1, "match", "app", 1, 1], value: "15:10"),
        Case(path: ["rule", 1, "match", "app", 2], value: "16:3"),
        Case(path: ["rule", 1, "match", "app", 2, "k"], key: "16:5", value: "16:9"),
        Case(path: ["rule", 1, "extra"], key: "18:7", header: "18:1"),
        Case(path: ["rule", 1, "extra", "k"], key: "19:1", value: "19:5"),
        Case(path: ["rule", 1, "sub", 0], header: "20:1"),
        Case(path: ["rule", 1, "sub", 0, "x"], key: "21:1", value: "21:5"),
        Case(path: ["rule", 1, "sub", 1], header: "22:1"),
        Case(path: ["rule", 1, "sub", 1, "esc"], key: "23:1", value: "23:7"),
        Case(path: ["rule", 1, "sub", 1, "lit key"], key: "24:1", value: "24:13"),
        Case(path: ["spaced"], key: "25:3"),
        Case(path: ["spaced", "h.k"], key: "25:12", header: "25:1"),
        Case(path: ["spaced", "h.k", "ü"], key: "26:1", value: "26:7"),
        Case(path: ["spaced", "h.k", "ü", 0], value: "26:8"),
        Case(path: ["spaced", "h.k", "ü", 1], value: "26:13"),
        Case(path: ["spaced", "h.k", "x"], key: "27:1", value: "27:5"),
    ]

    @Test(arguments: cases)
    func positions(_ c: Case) {
        func position(_ location: AudioPolicy.SourceLocation?) -> String? { location.map { "\($0.line):\($0.column)" } }
        #expect(position(Self.map.key(c.path)) == c.key, "key")
        #expect(position(Self.map.value(c.path)) == c.value, "value")
        #expect(position(Self.map.header(c.path)) == c.header, "header")
    }

    @Test func parsesAsTOML() throws {
        // The text above must be valid TOML, or the positions would prove nothing.
        _ = try TOMLReader.parse(text: Self.text, file: "t.toml")
        _ = try TOMLReader.parse(text: Self.multiline, file: "m.toml")
    }

    @Test func nothingOutsideTheText() {
        #expect(Self.map.key(["class", "short", "title"]) == nil)
        #expect(Self.map.key(["not"]) == nil)
        #expect(Self.map.value(["rule", 2]) == nil)
        #expect(Self.map.key(["rule", 1, "match", "app", 3]) == nil)
    }

    /// 250 nested arrays and inline tables (toml++ takes up to 256 levels) are mapped on a thread with a
    /// 256 KiB stack, what a test runner or a small thread gives; the recursive scan once overflowed it.
    /// What comes after them is still mapped, and what is shallow inside them too.
    @Test(arguments: [("[", "]"), ("{ a = ", " }")])
    func deepNestingOnASmallStack(_ open: String, _ close: String) throws {
        let depth = 250
        let text = "deep = " + String(repeating: open, count: depth) + "1" + String(repeating: close, count: depth)
            + "\nafter = 2\n"
        _ = try TOMLReader.parse(text: text, file: "d.toml") // valid TOML, so the map must cope with it
        nonisolated(unsafe) var map: TOMLSourceMap?
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setstacksize(&attributes, 256 * 1024)
        var thread = pthread_t()
        let box = Unmanaged.passRetained(ThreadBody { map = TOMLSourceMap(text: text, file: "d.toml") })
        #expect(pthread_create(&thread, &attributes, { raw in
            let body = Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue()
            body.run()
            return nil
        }, box.toOpaque()) == 0)
        pthread_join(thread, nil)
        let mapped = try #require(map)
        #expect(mapped.key(["after"]) == AudioPolicy.SourceLocation(file: "d.toml", line: 2, column: 1))
        #expect(mapped.value(["deep"]) == AudioPolicy.SourceLocation(file: "d.toml", line: 1, column: 8))
        // The control: the first levels are mapped as ever.
        let first: TOMLKeyPath = open == "[" ? ["deep", 0] : ["deep", "a"]
        #expect(mapped.value(first) == AudioPolicy.SourceLocation(file: "d.toml", line: 1, column: open == "[" ? 9 : 14))
    }

    @Test func fallsBackToTheNearestAncestor() {
        let missing: TOMLKeyPath = ["rule", 0, "class"]
        #expect(Self.map.keyLocation(missing) == AudioPolicy.SourceLocation(file: "t.toml", line: 7, column: 1))
        #expect(Self.map.valueLocation(["nothing", "here"]) == AudioPolicy.SourceLocation(file: "t.toml", line: 1, column: 1))
        #expect(Self.map.tableLocation(["class", "short"]) == AudioPolicy.SourceLocation(file: "t.toml", line: 3, column: 1))
    }

    @Test func pathDescriptions() {
        #expect(TOMLKeyPath(["rule", 2, "match", "media.role", 1]).description == #"rule[2].match."media.role"[1]"#)
        #expect(TOMLKeyPath(["class", "short", "duck-ramp"]).description == "class.short.duck-ramp")
        #expect(TOMLKeyPath(["a b", #"q"x"#]).description == #""a b"."q\"x""#)
        #expect(TOMLKeyPath.root.description == "")
    }

    static let multiline = #"""
        a = """x""""
        b = '''y''''
        c = """\"""""
        d = """line \
             next"""
        e = 1
        """#

    @Test func multilineStringsWithQuotesAndEscapes() {
        let map = TOMLSourceMap(text: Self.multiline, file: "m.toml")
        #expect(map.key(["b"])?.line == 2)
        #expect(map.key(["c"])?.line == 3)
        #expect(map.key(["d"])?.line == 4)
        #expect(map.key(["e"]).map { [$0.line, $0.column] } == [6, 1])
    }

    @Test func byteOrderMarkAndCRLF() throws {
        let text = "\u{FEFF}a = 1\r\nb = [\r\n  \"x\",\r\n]\r\n"
        _ = try TOMLReader.parse(text: text, file: "b.toml")
        let map = TOMLSourceMap(text: text, file: "b.toml")
        #expect(map.key(["a"]).map { [$0.line, $0.column] } == [1, 1])
        #expect(map.value(["b", 0]).map { [$0.line, $0.column] } == [3, 3])
    }
}
