import AudioPolicy
import ControlProtocol
import Foundation
import Testing

/// The control protocol's ops and event kinds are enums; docs/control-socket.md is their wire format.
/// The two must agree, and the enums must write what the page shows.
@Suite("control wire names")
struct ControlWireNameTests {
    static let page = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/control-socket.md")

    /// The page's protocol: everything before its first `## ` section (the limits).
    static func controlSection() throws -> String {
        let text = try String(contentsOf: page, encoding: .utf8)
        return String(text[..<(text.range(of: "\n## ")?.lowerBound ?? text.endIndex)])
    }

    /// Every match of `pattern`'s first group in `text`.
    static func captures(_ pattern: String, in text: String) throws -> [String] {
        let regex = try NSRegularExpression(pattern: pattern)
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    @Test("every op in docs/control-socket.md's table is a known op, and every known op is in the table")
    func opsMatchTheReadme() throws {
        let section = try Self.controlSection()
        let rows = try Self.captures(#"(?m)^\| `([a-z-]+)` \| `(\{[^`]*\})`"#, in: section)
        let requests = try Self.captures(#"(?m)^\| `[a-z-]+` \| `(\{[^`]*\})`"#, in: section)
        #expect(rows == ControlRequest.Op.known.map(\.rawValue))
        #expect(requests.count == rows.count)
        for (name, request) in zip(rows, requests) {
            let op = ControlRequest.Op(rawValue: name)
            #expect(op.isKnown, "\(name)")
            let decoded = try JSONDecoder().decode(ControlRequest.self, from: Data(request.utf8))
            #expect(decoded.op == op, "\(request)")
            // Written back as the page shows it (keys sorted, as clients send them).
            #expect(try decoded.line() == Self.sorted(request), "\(request)")
        }
    }

    @Test("every event kind docs/control-socket.md shows is a known kind, and every known kind is in it")
    func kindsMatchTheReadme() throws {
        let section = try Self.controlSection()
        let shown = Set(try Self.captures(#"\{"event":"([a-z-]+)""#, in: section))
        #expect(shown == Set(ControlEvent.Kind.known.map(\.rawValue)))
        let subscribed = try Self.captures(#""op":"subscribe","events":\[([^\]]*)\]"#, in: section)
        let kinds = try JSONDecoder().decode([ControlEvent.Kind].self, from: Data("[\(try #require(subscribed.first))]".utf8))
        #expect(kinds == ControlEvent.Kind.defaults)
        #expect(Set(ControlEvent.Kind.defaults).isSubset(of: ControlEvent.Kind.subscribable))
        #expect(Set(ControlEvent.Kind.subscribable).isSubset(of: ControlEvent.Kind.known))
    }

    @Test("names round-trip, are distinct, and an unknown name is kept as it was sent")
    func namesRoundTrip() throws {
        let ops = ControlRequest.Op.known.map(\.rawValue)
        let kinds = ControlEvent.Kind.known.map(\.rawValue)
        #expect(Set(ops).count == ops.count && Set(kinds).count == kinds.count)
        for op in ControlRequest.Op.known { #expect(ControlRequest.Op(rawValue: op.rawValue) == op) }
        for kind in ControlEvent.Kind.known { #expect(ControlEvent.Kind(rawValue: kind.rawValue) == kind) }

        let line = #"{"events":["now-playing","pause","x"],"id":1,"op":"sta\u0000tus"}"#
        let request = try JSONDecoder().decode(ControlRequest.self, from: Data(line.utf8))
        #expect(request.op == .unknown("sta\u{0}tus") && !request.op.isKnown)
        #expect(request.events == [.nowPlaying, .pause, .unknown("x")])
        #expect(try request.line() == line)
        // A name of the wrong type is still a decoding error, as it was when ops were strings.
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(ControlRequest.self, from: Data(#"{"op":1}"#.utf8))
        }
    }

    @Test("event lines are written as before: the kind's wire name, a decision's kind as a word")
    func eventBytes() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let decision = ControlEvent(event: .decision, decision: ControlEvent.DecisionInfo(
            stream: "12", application: "mpv", class: "primary", reason: "interrupted by class short",
            action: "ducked to -14.0 dB (0.2) over 500 ms", kind: .acted), at: 5)
        let text = String(decoding: try encoder.encode(decision), as: UTF8.self)
        #expect(text == #"{"at":5,"decision":{"action":"ducked to -14.0 dB (0.2) over 500 ms","application":"mpv","#
            + #""class":"primary","kind":"acted","reason":"interrupted by class short","stream":"12"},"event":"decision"}"#)
        #expect(try JSONDecoder().decode(ControlEvent.self, from: Data(text.utf8)) == decision)
        // A kind this client does not know still reads as an event line.
        let future = try JSONDecoder().decode(ControlEvent.self, from: Data(#"{"event":"error","at":1}"#.utf8))
        #expect(future.event == .unknown("error") && future.at == 1)
    }

    /// `json` with its keys sorted, as ``ControlRequest/line()`` writes a request.
    static func sorted(_ json: String) throws -> String {
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8))
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}
