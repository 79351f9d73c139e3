import AudioPolicy
import Foundation
#if canImport(FoundationXML)
import FoundationXML
import Fuzzing
#endif
import Testing
import TestRequirements

/// Timelines (`audio-policyd plot`, `test --timeline`): the SVG is XML, its gain line says what the engine
/// says (read back through the coordinate mapping the SVG documents), failed expectations are drawn red
/// with the expected value, it renders to a picture that is not blank, and the CLI writes it.
@Suite("Timeline", .serialized)
struct TimelineTests {
    static let fixtures = FixtureSuiteTests.folder
    static let navigation = fixtures.appendingPathComponent("short/navigation-ducks-and-restores.toml").path

    static func load(_ path: String) throws -> Fixture {
        try FixtureLoader.load(text: try String(contentsOfFile: path, encoding: .utf8), file: path)
    }

    static func svg(_ fixture: Fixture) -> String {
        TimelineSVG(Timeline.replay(fixture, policy: .embeddedDefault)).render()
    }

    // MARK: - XML

    @Test("the SVG parses as XML, with hostile stream names escaped")
    func parsesAsXML() throws {
        let document = try SVGDocument(Self.svg(try Self.load(Self.navigation)))
        #expect(document.root["xmlns"] == "http://www.w3.org/2000/svg")
        #expect(document.gains.count == 2)
        #expect(!document.text.contains("script"))

        // Markup, quotes and a control character (which XML 1.0 forbids even escaped) in user-given names.
        let hostile = """
            description = "<b>bold</b> & \\"quotes\\" 'single'"
            [[event]]
            at = 0
            start = "<music & \\"friends\\">\\u0001"
            properties = { "media.role" = "music", "application.name" = "]]><script>alert(1)</script>" }
            [[event]]
            at = 500
            start = "nav'</text>"
            properties = { "media.role" = "navigation" }
            [[expect]]
            at = 900
            stream = "<music & \\"friends\\">\\u0001"
            volume = 0.1
            """
        let fixture = try FixtureLoader.load(text: hostile, file: "hostile <&>.toml")
        let text = Self.svg(fixture)
        let parsed = try SVGDocument(text)
        #expect(parsed.gains.map(\.stream).contains("<music & \"friends\">\u{FFFD}"))
        #expect(parsed.text.contains("]]><script>alert(1)</script>"), "the app name is shown as text")
        #expect(!text.contains("<script"), "no element made from a user's string")
    }

    // MARK: - Gain read back

    /// Times in the navigation fixture: flat, mid-ramp down (2150: −10 dB), held, mid-restore (4750, 5000).
    static let times: [Milliseconds] = [500, 1000, 2050, 2150, 2230, 3000, 4600, 4750, 5000, 5250, 5499]

    @Test("the gain line read back from the SVG equals the engine's factor, mid-ramp included")
    func gainReadBack() throws {
        let fixture = try Self.load(Self.navigation)
        let document = try SVGDocument(Self.svg(fixture))
        let music = try #require(document.gains.first { $0.stream == "music" })
        for time in Self.times {
            let drawn = try #require(music.decibels(at: Double(time), mapping: document.mapping), "no point at \(time) ms")
            let engine = Timeline.drawnDecibels(try #require(Self.engineFactor(fixture, "music", at: time)))
            #expect(abs(drawn - engine) < 0.05, "at \(time) ms the picture says \(drawn) dB, the engine \(engine) dB")
        }
    }

    @Test("control: a time mapping off by 100 ms is caught mid-ramp")
    func wrongTimeMappingIsCaught() throws {
        let fixture = try Self.load(Self.navigation)
        let document = try SVGDocument(Self.svg(fixture))
        let music = try #require(document.gains.first { $0.stream == "music" })
        var shifted = document.mapping
        shifted.originX += 100 * shifted.pxPerMs
        var worst = 0.0
        for time in Self.times {
            guard let drawn = music.decibels(at: Double(time), mapping: shifted),
                  let factor = Self.engineFactor(fixture, "music", at: time) else { continue }
            worst = max(worst, abs(drawn - Timeline.drawnDecibels(factor)))
        }
        #expect(worst > 1, "a wrong mapping went unnoticed (worst difference \(worst) dB)")
    }

    @Test("control: a wrong expectation is drawn red with its expected value, the right ones green")
    func wrongExpectationIsRed() throws {
        let text = try String(contentsOfFile: Self.navigation, encoding: .utf8)
            .replacingOccurrences(of: "volume = 0.316\n", with: "volume = 0.5\n")
        let fixture = try FixtureLoader.load(text: text, file: "wrong.toml")
        let timeline = Timeline.replay(fixture, policy: .embeddedDefault)
        #expect(timeline.result.failures.count == 2)
        #expect(timeline.result.outcomes.count == 10)
        let document = try SVGDocument(TimelineSVG(timeline).render())
        let failed = document.marks.filter { !$0.held }
        #expect(failed.map(\.at).sorted() == [2150, 5000])
        #expect(failed.allSatisfy { $0.stream == "music" && $0.text.contains("expected volume 0.5, got volume 0.316") })
        #expect(document.marks.filter(\.held).count == 8)

        // The unchanged fixture: every mark green.
        let right = try SVGDocument(Self.svg(try Self.load(Self.navigation)))
        #expect(right.marks.count == 10 && right.marks.allSatisfy { $0.held })
    }

    @Test("every expectation's outcome carries its time and stream")
    func outcomes() throws {
        let result = FixtureRunner().run(try Self.load(Self.navigation), policy: .embeddedDefault)
        #expect(result.outcomes.map(\.at) == [1000, 2000, 2150, 2300, 3500, 4499, 4750, 5000, 5500, 5500])
        #expect(result.outcomes.allSatisfy { $0.held })
        #expect(result.outcomes.last?.stream == "prompt")
    }

    @Test("bands say what the policy did and why; Now Playing is a segment")
    func bandsAndOwner() throws {
        let timeline = Timeline.replay(try Self.load(Self.navigation), policy: .embeddedDefault)
        let music = try #require(timeline.lanes.first { $0.stream == "music" })
        let ducked = try #require(music.bands.first { $0.kind == .ducked })
        #expect(ducked.start == 2000 && ducked.end == 4500)
        #expect(ducked.reason?.contains("navigation") == true)
        #expect(timeline.nowPlaying.map(\.owner) == ["music"])
        #expect(timeline.lanes.first { $0.stream == "prompt" }?.ended == 4000)
    }

    @Test("a recording that interrupts (an app that listens) has a lane of its own, its band broken while its app plays")
    func recordingLane() throws {
        let folder = FixtureSuiteTests.folder.deletingLastPathComponent().deletingLastPathComponent()
        let path = folder.appendingPathComponent("policies/listening.toml").path
        let policy = try PolicyLoader.load(text: try String(contentsOfFile: path, encoding: .utf8), file: path)
        let timeline = Timeline.replay(
            try Self.load(Self.fixtures.appendingPathComponent("listening/listener-that-plays-is-not-listening.toml").path),
            policy: policy)
        let mic = try #require(timeline.lanes.first { $0.stream == "mic" })
        #expect(mic.isHook && mic.isCapture && mic.className == "listening")
        // Recording from 1000 to 5000 ms; its app's own stream plays from 2000 to 4000 ms.
        #expect(mic.bands.filter { $0.kind == .interrupting }.map { [$0.start, $0.end] } == [[1000, 2000], [4000, 5000]])
        #expect(TimelineSVG(timeline).render().contains(">recording, class listening<"))
    }

    @Test("a paused band names the decision that paused, a muted band the one that muted (by outcome, not words)")
    func bandsNameTheirDecision() throws {
        let soundtrack = Timeline.replay(
            try Self.load(Self.fixtures.appendingPathComponent("audibility/soundtrack-pauses-music-for-good.toml").path),
            policy: .embeddedDefault)
        let paused = try #require(soundtrack.lanes.first { $0.stream == "music" }?.bands.first { $0.kind == .paused })
        #expect(paused.reason == "Firefox (primary) took over: paused indefinitely")
        let call = Timeline.replay(
            try Self.load(Self.fixtures.appendingPathComponent("call/call-mutes-stream-without-player.toml").path),
            policy: .embeddedDefault)
        let muted = try #require(call.lanes.first { $0.stream == "game" }?.bands.first { $0.kind == .muted })
        #expect(muted.reason == "interrupted by class call; no player: faded out and muted (to be unmuted)")
    }

    /// The factor an independent replay (straight on the engine, deadlines delivered on time) gives at `time`.
    static func engineFactor(_ fixture: Fixture, _ id: StreamID, at time: Milliseconds) -> Double? {
        var engine = Engine(policy: .embeddedDefault)
        var now = 0
        func deliverDeadlines(through time: Milliseconds) {
            while let due = engine.nextDeadline, due <= time {
                now = max(now, due)
                _ = engine.handle(.tick, at: now)
            }
        }
        for step in fixture.steps where step.at <= time {
            deliverDeadlines(through: step.at)
            now = max(now, step.at)
            if case let .event(event) = step.action { _ = engine.handle(event, at: now) }
        }
        deliverDeadlines(through: time)
        return engine.factor(of: id, at: time)
    }

    // MARK: - Rendering

    static let renderTools = ["/usr/bin/rsvg-convert", "/usr/bin/pngtopnm"]
    static var canRender: Bool { renderTools.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) } }

    @Test("rendered to PNG, the picture is not blank (and a blank one would be caught)",
          .needs(canRender ? nil : "needs rsvg-convert and pngtopnm: apt-get install librsvg2-bin netpbm (scripts/test installs them)"))
    func rendersNotBlank() throws {
        let picture = try Raster(svg: Self.svg(try Self.load(Self.navigation)))
        #expect(picture.width == 1200)
        #expect(picture.distinctColours > 20, "only \(picture.distinctColours) colours")
        #expect(picture.nonWhiteFraction > 0.05, "only \(picture.nonWhiteFraction) of the pixels are drawn on")

        // Control: a blank SVG of the same size fails both checks.
        let blank = try Raster(svg: """
            <svg xmlns="http://www.w3.org/2000/svg" width="1200" height="400"><rect width="1200" height="400" fill="#ffffff"/></svg>
            """)
        #expect(blank.distinctColours == 1 && blank.nonWhiteFraction == 0)
    }

    // MARK: - CLI

    @Test("test --timeline DIR writes a picture per fixture and exits 0")
    func testWritesTimelines() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("timeline-\(getpid())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try Self.cli(["test", "--timeline", folder.path, Self.navigation])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout.contains("1 passed, 0 failed"))
        let written = folder.appendingPathComponent("navigation-ducks-and-restores.svg").path
        let svg = try String(contentsOfFile: written, encoding: .utf8)
        #expect(try SVGDocument(svg).gains.count == 2)
    }

    @Test("plot writes the file; a bad fixture gives FILE:LINE:COLUMN: message and exit 1")
    func plotCommand() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("plot-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        let good = folder.appendingPathComponent("nav.svg").path
        let ok = try Self.cli(["plot", Self.navigation, "-o", good])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(FileManager.default.fileExists(atPath: good))

        let bad = folder.appendingPathComponent("bad.toml").path
        try "[[event]]\nat = 100\nstart = \"a\"\n\n[[expect]]\nat = 200\nstream = \"a\"\nstate = \"ducky\"\n"
            .write(toFile: bad, atomically: true, encoding: .utf8)
        let output = folder.appendingPathComponent("bad.svg").path
        let failed = try Self.cli(["plot", bad, "-o", output])
        #expect(failed.status != 0)
        let lines = failed.stderr.split(separator: "\n").map(String.init)
        #expect(!lines.isEmpty)
        #expect(lines.allSatisfy { $0.hasPrefix("\(bad):8:9: ") }, "\(failed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }

    static func cli(_ arguments: [String]) throws -> CommandOutcome {
        let binary = CheckCommandFuzzTests.binary
        try #require(FileManager.default.isExecutableFile(atPath: binary), "no audio-policyd at \(binary)")
        return try CommandOutcome.run(binary, arguments)
    }
}

// MARK: - Reading an SVG back

/// What the tests read from a timeline SVG: the documented coordinate mapping, the gain lines, the marks.
struct SVGDocument {
    /// x of t = 0 and px per ms, from the root element.
    struct Mapping {
        var originX: Double
        var pxPerMs: Double
    }

    struct Gain {
        var stream: String
        var zeroDecibelY: Double
        var pxPerDecibel: Double
        var points: [(x: Double, y: Double)]

        /// The gain drawn at `time` ms, by `mapping`: points inverted to (ms, dB), interpolated between
        /// the two around `time` (a ramp is straight in dB, so between two samples a line is exact).
        func decibels(at time: Double, mapping: Mapping) -> Double? {
            let inverted = points.map { point in
                ((point.x - mapping.originX) / mapping.pxPerMs, (zeroDecibelY - point.y) / pxPerDecibel)
            }
            for (left, right) in zip(inverted, inverted.dropFirst()) where left.0 <= time && time <= right.0 {
                if right.0 == left.0 { return right.1 }
                return left.1 + (right.1 - left.1) * (time - left.0) / (right.0 - left.0)
            }
            return nil
        }
    }

    struct Mark {
        var at: Int
        var stream: String?
        var held: Bool
        var text: String
    }

    var root: [String: String] = [:]
    var gains: [Gain] = []
    var marks: [Mark] = []
    /// All character data, concatenated.
    var text = ""

    var mapping: Mapping {
        Mapping(originX: Double(root["data-time-origin-x"] ?? "") ?? .nan, pxPerMs: Double(root["data-px-per-ms"] ?? "") ?? .nan)
    }

    struct ParseError: Error, CustomStringConvertible { var description: String }

    private init() {}

    init(_ svg: String) throws {
        let reader = Reader()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = reader
        guard parser.parse() else {
            throw ParseError(description: "not XML: \(parser.parserError.map { "\($0)" } ?? "?") at line \(parser.lineNumber)")
        }
        self = reader.document
    }

    private final class Reader: NSObject, XMLParserDelegate {
        var document = SVGDocument()
        /// The mark being read (its text is in a nested <text> and <title>).
        var mark: Mark?
        var depthInMark = 0

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            if mark != nil { depthInMark += 1 }
            if name == "svg" { document.root = attributes }
            if name == "polyline", attributes["class"] == "gain" {
                let points = (attributes["points"] ?? "").split(separator: " ").compactMap { pair -> (x: Double, y: Double)? in
                    let parts = pair.split(separator: ",").compactMap { Double($0) }
                    return parts.count == 2 ? (parts[0], parts[1]) : nil
                }
                document.gains.append(Gain(stream: attributes["data-stream"] ?? "",
                                           zeroDecibelY: Double(attributes["data-y-0db"] ?? "") ?? .nan,
                                           pxPerDecibel: Double(attributes["data-px-per-db"] ?? "") ?? .nan,
                                           points: points))
            }
            if name == "g", let cls = attributes["class"], cls.hasPrefix("expect ") {
                mark = Mark(at: Int(attributes["data-at"] ?? "") ?? -1, stream: attributes["data-stream"],
                            held: cls == "expect held", text: "")
                depthInMark = 0
            }
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            guard let current = mark else { return }
            if depthInMark == 0 {
                document.marks.append(current)
                mark = nil
            } else {
                depthInMark -= 1
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            document.text += string
            mark?.text += string
        }
    }
}

/// A timeline rendered to pixels with `rsvg-convert`, decoded through `pngtopnm` (binary PPM).
struct Raster {
    var width = 0
    var height = 0
    var distinctColours = 0
    var nonWhiteFraction = 0.0

    struct RenderError: Error, CustomStringConvertible { var description: String }

    init(svg: String) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("raster-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let svgPath = folder.appendingPathComponent("t.svg").path, pngPath = folder.appendingPathComponent("t.png").path
        try svg.write(toFile: svgPath, atomically: true, encoding: .utf8)
        _ = try Self.run("/usr/bin/rsvg-convert", ["-f", "png", "-b", "white", "-o", pngPath, svgPath])
        let ppm = try Self.run("/usr/bin/pngtopnm", [pngPath])
        try decode(ppm)
    }

    /// `P6 W H MAX` then W×H RGB triples.
    private mutating func decode(_ ppm: [UInt8]) throws {
        var index = 0
        func token() -> Int? {
            while index < ppm.count, ppm[index] == 0x23 || [0x20, 0x0A, 0x0D, 0x09].contains(ppm[index]) {
                if ppm[index] == 0x23 { while index < ppm.count, ppm[index] != 0x0A { index += 1 } }
                index += 1
            }
            var digits = ""
            while index < ppm.count, (0x30...0x39).contains(ppm[index]) {
                digits.append(Character(UnicodeScalar(ppm[index])))
                index += 1
            }
            return Int(digits)
        }
        guard ppm.count > 2, ppm[0] == 0x50, ppm[1] == 0x36 else { throw RenderError(description: "not a binary PPM") }
        index = 2
        guard let width = token(), let height = token(), let max = token(), max == 255 else {
            throw RenderError(description: "bad PPM header")
        }
        index += 1
        guard ppm.count - index >= width * height * 3 else { throw RenderError(description: "short PPM") }
        self.width = width
        self.height = height
        var colours: Set<UInt32> = []
        var nonWhite = 0
        for pixel in 0..<(width * height) {
            let at = index + pixel * 3
            let rgb = UInt32(ppm[at]) << 16 | UInt32(ppm[at + 1]) << 8 | UInt32(ppm[at + 2])
            colours.insert(rgb)
            if rgb != 0xFFFFFF { nonWhite += 1 }
        }
        distinctColours = colours.count
        nonWhiteFraction = Double(nonWhite) / Double(width * height)
    }

    private static func run(_ tool: String, _ arguments: [String]) throws -> [UInt8] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw RenderError(description: "\(tool) \(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
        }
        return [UInt8](data)
    }
}
