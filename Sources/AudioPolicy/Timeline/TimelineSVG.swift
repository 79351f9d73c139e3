/// Draws a ``Timeline`` as a standalone SVG document: one lane per stream, read at a glance in any browser.
///
/// Plain SVG 1.1, no script, no external fonts or files, so the picture can be attached to a bug report
/// or embedded in a README as it is. Every piece of text is escaped: stream ids, app names and reasons
/// come from users' fixtures and from apps.
///
/// The coordinates are documented on the elements, so a test (or a person) can read values back:
/// the root `<svg>` carries `data-time-origin-x` (the x of t = 0 ms) and `data-px-per-ms`; each gain
/// `<polyline class="gain">` carries `data-stream`, `data-y-0db` (the y of 0 dB) and `data-px-per-db`.
/// A point (x, y) is at `(x - origin) / pxPerMs` ms and `(y0dB - y) / pxPerDB` dB. Each expectation is a
/// `<g class="expect held">` or `<g class="expect failed">` with `data-at` (ms) and `data-stream`.
public struct TimelineSVG: Sendable {
    public var timeline: Timeline

    public init(_ timeline: Timeline) { self.timeline = timeline }

    // MARK: - Layout

    static let width = 1200.0
    static let plotLeft = 250.0
    static let plotRight = 1170.0
    static let titleTop = 30.0
    /// Where the Now Playing row and the lanes start under a one-line title; each more line of title
    /// moves them down by ``titleLineHeight``.
    static let nowPlayingTopUnderOneLine = 78.0
    static let titleLineHeight = 20.0
    static let titleLines = 3
    static let nowPlayingHeight = 26.0
    static let lanesTopUnderOneLine = 122.0
    static let laneHeight = 104.0
    static let laneGap = 10.0
    /// Room at a lane's top for the reason of a band, above the 0 dB line.
    static let laneTopPadding = 24.0
    static let laneBottomPadding = 14.0
    static let silentStripHeight = 7.0
    static let font = "system-ui, -apple-system, 'Segoe UI', 'DejaVu Sans', Arial, sans-serif"

    // MARK: - Colours (colour-blind friendly where it matters: ducked amber, paused blue)

    static let gainColour = "#0b57d0"
    static let heldColour = "#1a7f37"
    static let failedColour = "#cf222e"
    static func fill(_ kind: Timeline.Band.Kind) -> (colour: String, opacity: String) {
        switch kind {
        case .ducked: ("#f2a900", "0.30")
        case .paused: ("#5b7fd6", "0.30")
        case .muted: ("#6e7781", "0.40")
        case .silent: ("#8c959f", "0.85")
        case .interrupting: ("#a371f7", "0.35")
        case .outputLost: ("#cf222e", "0.85")
        }
    }

    static func describe(_ kind: Timeline.Band.Kind) -> String {
        switch kind {
        case .ducked: "ducked"
        case .paused: "paused"
        case .muted: "muted (fallback)"
        case .silent: "silent (monitor)"
        case .interrupting: "interruption"
        case .outputLost: "output lost"
        }
    }

    /// The span of time drawn (the timeline's, at least a second: nothing is drawn past its end, where
    /// nothing was replayed) and the step between ticks, for at most 12 of them.
    var span: (total: Double, tick: Double) {
        let end = Double(max(timeline.end, 1000))
        let tick = [100.0, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 30_000, 60_000, 120_000, 300_000]
            .first { end / $0 <= 12 } ?? 600_000
        return (end, tick)
    }

    var pxPerMs: Double { (Self.plotRight - Self.plotLeft) / span.total }
    func x(_ ms: Double) -> Double { Self.plotLeft + ms * pxPerMs }
    /// The description, wrapped to at most ``titleLines`` lines (the last one cut short if need be).
    var titleLines: [String] {
        Self.wrapped(timeline.title ?? "(no description)", toWidth: Self.width - 40, fontSize: 16, lines: Self.titleLines)
    }
    var headerExtra: Double { Double(titleLines.count - 1) * Self.titleLineHeight }
    var nowPlayingTop: Double { Self.nowPlayingTopUnderOneLine + headerExtra }
    var lanesTop: Double { Self.lanesTopUnderOneLine + headerExtra }
    func laneTop(_ index: Int) -> Double { lanesTop + Double(index) * (Self.laneHeight + Self.laneGap) }
    func zeroDecibelY(_ index: Int) -> Double { laneTop(index) + Self.laneTopPadding }
    func floorY(_ index: Int) -> Double { laneTop(index) + Self.laneHeight - Self.laneBottomPadding }
    func pxPerDecibel(_ index: Int) -> Double { (floorY(index) - zeroDecibelY(index)) / -Timeline.floorDecibels }
    func y(decibels: Double, lane index: Int) -> Double { zeroDecibelY(index) - decibels * pxPerDecibel(index) }

    var lanesBottom: Double { laneTop(timeline.lanes.count) - Self.laneGap }
    var axisTop: Double { lanesBottom + 6 }
    var legendTop: Double { axisTop + 48 }
    var height: Double { legendTop + 62 }

    // MARK: - Document

    /// The whole SVG document.
    public func render() -> String {
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="\(n(Self.width))" height="\(n(height))" \
            viewBox="0 0 \(n(Self.width)) \(n(height))" font-family="\(Self.font)" font-size="12" \
            data-time-origin-x="\(n(Self.plotLeft))" data-px-per-ms="\(pxPerMs)" data-floor-db="\(n(Timeline.floorDecibels))">

            """
        out += "<title>\(Self.escape(timeline.title ?? timeline.file))</title>\n"
        out += "<rect x=\"0\" y=\"0\" width=\"\(n(Self.width))\" height=\"\(n(height))\" fill=\"#ffffff\"/>\n"
        out += header()
        out += grid()
        out += nowPlaying()
        for index in timeline.lanes.indices { out += lane(index) }
        out += axis()
        out += marks()
        out += legend()
        out += "</svg>\n"
        return out
    }

    private func header() -> String {
        let result = timeline.result
        let held = result.outcomes.filter(\.held).count
        let verdict = result.passed
            ? "PASS: all \(result.outcomes.count) expectations held"
            : "FAIL: \(result.outcomes.count - held) of \(result.outcomes.count) expectations failed"
        let title = titleLines.enumerated().map { index, line in
            "<tspan x=\"20\" dy=\"\(index == 0 ? "0" : n(Self.titleLineHeight))\">\(Self.escape(line))</tspan>"
        }.joined()
        return """
            <g class="header">
            <text x="20" y="\(n(Self.titleTop))" font-size="16" font-weight="bold" fill="#1f2328">\(title)<title>\(Self.escape(timeline.title ?? ""))</title></text>
            <text x="20" y="\(n(Self.titleTop + 20 + headerExtra))" font-size="12" fill="#59636e">\(Self.escape(Self.truncated(timeline.file, toWidth: 700, fontSize: 12)))</text>
            <text x="\(n(Self.plotRight))" y="\(n(Self.titleTop + 20 + headerExtra))" font-size="13" font-weight="bold" text-anchor="end" fill="\(result.passed ? Self.heldColour : Self.failedColour)">\(verdict)</text>
            </g>

            """
    }

    /// Vertical lines at every tick, across the Now Playing row and the lanes.
    private func grid() -> String {
        var out = "<g class=\"grid\" stroke=\"#d8dee4\" stroke-width=\"1\">\n"
        var tick = 0.0
        while tick <= span.total + 0.5 {
            let at = x(tick)
            out += "<line x1=\"\(n(at))\" y1=\"\(n(nowPlayingTop))\" x2=\"\(n(at))\" y2=\"\(n(lanesBottom))\"/>\n"
            tick += span.tick
        }
        return out + "</g>\n"
    }

    private func nowPlaying() -> String {
        let top = nowPlayingTop, height = Self.nowPlayingHeight
        var out = "<g class=\"now-playing\">\n"
        out += "<text x=\"20\" y=\"\(n(top + 17))\" font-size=\"13\" font-weight=\"bold\" fill=\"#1f2328\">Now Playing</text>\n"
        out += "<rect x=\"\(n(Self.plotLeft))\" y=\"\(n(top))\" width=\"\(n(Self.plotRight - Self.plotLeft))\" height=\"\(n(height))\" fill=\"#f6f8fa\" stroke=\"#d0d7de\"/>\n"
        for segment in timeline.nowPlaying {
            let left = x(Double(segment.start)), width = x(Double(segment.end)) - left
            let colour = Self.ownerColour(segment.owner)
            let label = "\(segment.owner.rawValue) owns Now Playing, \(Self.seconds(segment.start))–\(Self.seconds(segment.end)) s"
            out += "<rect class=\"owner\" data-stream=\"\(Self.escape(segment.owner.rawValue))\" x=\"\(n(left))\" y=\"\(n(top))\" width=\"\(n(width))\" height=\"\(n(height))\" fill=\"\(colour)\" fill-opacity=\"0.85\" stroke=\"#ffffff\"><title>\(Self.escape(label))</title></rect>\n"
            let text = Self.truncated(segment.owner.rawValue, toWidth: width - 10, fontSize: 12)
            if !text.isEmpty {
                out += "<text x=\"\(n(left + 5))\" y=\"\(n(top + 17))\" font-size=\"12\" font-weight=\"bold\" fill=\"#ffffff\">\(Self.escape(text))</text>\n"
            }
        }
        return out + "</g>\n"
    }

    private func lane(_ index: Int) -> String {
        let lane = timeline.lanes[index]
        let top = laneTop(index), bottom = top + Self.laneHeight
        let plotWidth = Self.plotRight - Self.plotLeft
        var out = "<g class=\"lane\" data-stream=\"\(Self.escape(lane.stream.rawValue))\">\n"
        // Grey where the stream was not there; white while it was.
        out += "<rect x=\"\(n(Self.plotLeft))\" y=\"\(n(top))\" width=\"\(n(plotWidth))\" height=\"\(n(Self.laneHeight))\" fill=\"#eef1f4\" stroke=\"#d0d7de\"/>\n"
        let lifeStart = x(Double(lane.start)), lifeEnd = x(Double(lane.ended ?? timeline.end))
        out += "<rect x=\"\(n(lifeStart))\" y=\"\(n(top))\" width=\"\(n(max(0, lifeEnd - lifeStart)))\" height=\"\(n(Self.laneHeight))\" fill=\"#ffffff\"/>\n"

        // Labels: id, app, class.
        let name = Self.truncated(lane.stream.rawValue, toWidth: Self.plotLeft - 40, fontSize: 14)
        let app = Self.truncated(lane.application, toWidth: Self.plotLeft - 40, fontSize: 12)
        let cls = Self.truncated((lane.isCapture ? "recording, class " : lane.isHook ? "hook, class " : "class ")
                                 + lane.className,
                                 toWidth: Self.plotLeft - 40, fontSize: 12)
        let full = "\(lane.stream.rawValue) (\(lane.application)), class \(lane.className)"
        out += "<text x=\"20\" y=\"\(n(top + 22))\" font-size=\"14\" font-weight=\"bold\" fill=\"#1f2328\">\(Self.escape(name))<title>\(Self.escape(full))</title></text>\n"
        out += "<text x=\"20\" y=\"\(n(top + 40))\" font-size=\"12\" fill=\"#1f2328\">\(Self.escape(app))</text>\n"
        out += "<text x=\"20\" y=\"\(n(top + 57))\" font-size=\"12\" fill=\"#59636e\">\(Self.escape(cls))</text>\n"

        // Bands, behind the gain.
        for band in lane.bands {
            let left = x(Double(band.start)), width = max(1, x(Double(band.end)) - left)
            let (colour, opacity) = Self.fill(band.kind)
            let tip = "\(Self.describe(band.kind)) \(Self.seconds(band.start))–\(Self.seconds(band.end)) s"
                + (band.reason.map { ": \($0)" } ?? "")
            let (bandTop, bandHeight) = band.kind == .silent
                ? (bottom - Self.silentStripHeight, Self.silentStripHeight)
                : band.kind == .outputLost ? (top, Self.silentStripHeight) : (top, Self.laneHeight)
            out += "<rect class=\"band \(band.kind.rawValue)\" x=\"\(n(left))\" y=\"\(n(bandTop))\" width=\"\(n(width))\" height=\"\(n(bandHeight))\" fill=\"\(colour)\" fill-opacity=\"\(opacity)\"><title>\(Self.escape(tip))</title></rect>\n"
            if band.kind != .silent, band.kind != .outputLost {
                let reason = Self.truncated(Self.describe(band.kind) + (band.reason.map { ": \($0)" } ?? ""),
                                            toWidth: width - 6, fontSize: 11)
                if !reason.isEmpty {
                    out += "<text x=\"\(n(left + 3))\" y=\"\(n(top + 14))\" font-size=\"11\" fill=\"#3d444d\">\(Self.escape(reason))</text>\n"
                }
            }
        }

        // dB guides (a hook's interruption has no sound to measure).
        for decibels in lane.isHook ? [] : [0.0, -20, Timeline.floorDecibels] {
            let at = y(decibels: decibels, lane: index)
            out += "<line x1=\"\(n(Self.plotLeft))\" y1=\"\(n(at))\" x2=\"\(n(Self.plotRight))\" y2=\"\(n(at))\" stroke=\"#afb8c1\" stroke-width=\"0.6\" stroke-dasharray=\"3 3\"/>\n"
            let label = decibels == 0 ? "0 dB" : decibels == Timeline.floorDecibels ? "≤\(n(decibels))" : n(decibels)
            out += "<text x=\"\(n(Self.plotLeft - 5))\" y=\"\(n(at + 4))\" font-size=\"10\" text-anchor=\"end\" fill=\"#59636e\">\(Self.escape(label))</text>\n"
        }

        // The gain.
        if !lane.isHook, !lane.samples.isEmpty {
            let points = lane.samples.map { "\(n(x($0.at))),\(n(y(decibels: $0.decibels, lane: index)))" }
            out += "<polyline class=\"gain\" data-stream=\"\(Self.escape(lane.stream.rawValue))\" data-y-0db=\"\(n(zeroDecibelY(index)))\" data-px-per-db=\"\(pxPerDecibel(index))\" fill=\"none\" stroke=\"\(Self.gainColour)\" stroke-width=\"2.2\" stroke-linejoin=\"round\" stroke-linecap=\"round\" points=\"\(points.joined(separator: " "))\"/>\n"
        }
        return out + "</g>\n"
    }

    private func axis() -> String {
        let top = axisTop
        var out = "<g class=\"axis\" font-size=\"11\" fill=\"#59636e\">\n"
        out += "<line x1=\"\(n(Self.plotLeft))\" y1=\"\(n(top))\" x2=\"\(n(Self.plotRight))\" y2=\"\(n(top))\" stroke=\"#59636e\"/>\n"
        var tick = 0.0
        while tick <= span.total + 0.5 {
            let at = x(tick)
            out += "<line x1=\"\(n(at))\" y1=\"\(n(top))\" x2=\"\(n(at))\" y2=\"\(n(top + 5))\" stroke=\"#59636e\"/>\n"
            out += "<text x=\"\(n(at))\" y=\"\(n(top + 18))\" text-anchor=\"middle\">\(Self.seconds(Int(tick)))</text>\n"
            tick += span.tick
        }
        out += "<text x=\"\(n((Self.plotLeft + Self.plotRight) / 2))\" y=\"\(n(top + 36))\" font-size=\"12\" text-anchor=\"middle\" fill=\"#1f2328\">time (s)</text>\n"
        return out + "</g>\n"
    }

    /// The expectations, over everything else: green dots where they held, red crosses with the expected
    /// value where they did not.
    private func marks() -> String {
        var out = "<g class=\"expectations\">\n"
        // Failed marks at one place are stacked, so their texts do not overwrite each other.
        var stacked: [String: Int] = [:]
        for mark in timeline.marks {
            let at = x(Double(mark.at))
            let markY: Double
            if let lane = mark.lane {
                markY = mark.volume.map { y(decibels: Timeline.drawnDecibels($0), lane: lane) }
                    ?? laneTop(lane) + Self.laneTopPadding - 8
            } else {
                markY = nowPlayingTop + Self.nowPlayingHeight / 2
            }
            let where_ = "\(mark.location)"
            let tip = mark.held ? "held: \(mark.expected) at \(mark.at) ms (\(where_))"
                : "FAILED: expected \(mark.expected), got \(mark.got ?? "?") at \(mark.at) ms (\(where_))"
            let stream = mark.stream.map { " data-stream=\"\(Self.escape($0.rawValue))\"" } ?? ""
            out += "<g class=\"expect \(mark.held ? "held" : "failed")\" data-at=\"\(mark.at)\"\(stream)><title>\(Self.escape(tip))</title>\n"
            if mark.held {
                // A white ring keeps it visible on any band or Now Playing colour.
                out += "<circle cx=\"\(n(at))\" cy=\"\(n(markY))\" r=\"5.5\" fill=\"#ffffff\" stroke=\"\(Self.heldColour)\" stroke-width=\"1\"/>\n"
                out += "<circle cx=\"\(n(at))\" cy=\"\(n(markY))\" r=\"3.5\" fill=\"\(Self.heldColour)\"/>\n"
            } else {
                let r = 5.5
                out += "<circle cx=\"\(n(at))\" cy=\"\(n(markY))\" r=\"\(n(r + 2))\" fill=\"#ffffff\" stroke=\"\(Self.failedColour)\" stroke-width=\"2\"/>\n"
                out += "<path d=\"M\(n(at - r / 1.6)),\(n(markY - r / 1.6)) L\(n(at + r / 1.6)),\(n(markY + r / 1.6)) M\(n(at - r / 1.6)),\(n(markY + r / 1.6)) L\(n(at + r / 1.6)),\(n(markY - r / 1.6))\" stroke=\"\(Self.failedColour)\" stroke-width=\"2\"/>\n"
                let key = "\(mark.lane ?? -1)"
                let row = stacked[key, default: 0]
                stacked[key] = row + 1
                let text = "expected \(mark.expected)" + (mark.got.map { ", got \($0)" } ?? "")
                // Right of the mark, or left of it near the right edge.
                let rightSide = at < Self.plotRight - 260
                let textY = (mark.lane.map { laneTop($0) + Self.laneHeight - 22 } ?? markY + 4) - Double(row % 3) * 14
                out += "<text x=\"\(n(rightSide ? at + 10 : at - 10))\" y=\"\(n(textY))\" font-size=\"12\" font-weight=\"bold\" text-anchor=\"\(rightSide ? "start" : "end")\" fill=\"\(Self.failedColour)\" stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\">\(Self.escape(Self.truncated(text, toWidth: 420, fontSize: 12)))</text>\n"
            }
            out += "</g>\n"
        }
        return out + "</g>\n"
    }

    private func legend() -> String {
        let top = legendTop
        var out = "<g class=\"legend\" font-size=\"12\" fill=\"#1f2328\">\n"
        var left = 20.0
        func item(_ swatch: String, _ label: String, width: Double) {
            out += swatch + "<text x=\"\(n(left + 24))\" y=\"\(n(top + 4))\">\(Self.escape(label))</text>\n"
            left += width
        }
        item("<line x1=\"\(n(left))\" y1=\"\(n(top))\" x2=\"\(n(left + 18))\" y2=\"\(n(top))\" stroke=\"\(Self.gainColour)\" stroke-width=\"2.2\"/>",
             "policy gain (dB; floor \(n(Timeline.floorDecibels)))", width: 230)
        for kind in Timeline.Band.Kind.allCases {
            let (colour, opacity) = Self.fill(kind)
            item("<rect x=\"\(n(left))\" y=\"\(n(top - 8))\" width=\"18\" height=\"12\" fill=\"\(colour)\" fill-opacity=\"\(opacity)\" stroke=\"#afb8c1\"/>",
                 Self.describe(kind), width: kind == .ducked || kind == .paused ? 90 : 140)
        }
        left = 20
        let second = top + 24
        out += "<circle cx=\"\(n(left + 9))\" cy=\"\(n(second - 4))\" r=\"4.5\" fill=\"\(Self.heldColour)\"/><text x=\"\(n(left + 24))\" y=\"\(n(second))\">expectation held</text>\n"
        left += 150
        out += "<circle cx=\"\(n(left + 9))\" cy=\"\(n(second - 4))\" r=\"6\" fill=\"#ffffff\" stroke=\"\(Self.failedColour)\" stroke-width=\"2\"/><text x=\"\(n(left + 24))\" y=\"\(n(second))\" fill=\"\(Self.failedColour)\">expectation failed (expected value shown)</text>\n"
        left += 300
        out += "<rect x=\"\(n(left))\" y=\"\(n(second - 12))\" width=\"18\" height=\"12\" fill=\"#eef1f4\" stroke=\"#afb8c1\"/><text x=\"\(n(left + 24))\" y=\"\(n(second))\">stream not there</text>\n"
        left += 150
        out += "<text x=\"\(n(left))\" y=\"\(n(second))\" fill=\"#59636e\">Hover a band or mark for the full reason.</text>\n"
        return out + "</g>\n"
    }

    // MARK: - Text

    /// `text` made safe for XML character data and attribute values: markup characters escaped,
    /// characters XML 1.0 forbids (most control characters) replaced by U+FFFD, line breaks by spaces.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r": out += " "
            default:
                let value = scalar.value
                if value < 0x20 || (0xD800...0xDFFF).contains(value) || value == 0xFFFE || value == 0xFFFF {
                    out.unicodeScalars.append("\u{FFFD}")
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out
    }

    /// `text` cut (with an ellipsis) to about `width` px at `fontSize`, or "" when not even a few characters fit.
    static func truncated(_ text: String, toWidth width: Double, fontSize: Double) -> String {
        let fits = Int(width / (fontSize * 0.58))
        if text.count <= fits { return text }
        if fits < 4 { return "" }
        return String(text.prefix(fits - 1)) + "…"
    }

    /// `text` in lines of about `width` px at `fontSize`, broken between words; at most `lines` of them,
    /// the last cut short with an ellipsis if the text goes on.
    static func wrapped(_ text: String, toWidth width: Double, fontSize: Double, lines: Int) -> [String] {
        let fits = max(8, Int(width / (fontSize * 0.58)))
        var out: [String] = []
        var line = ""
        var rest = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)[...]
        while let word = rest.first {
            let candidate = line.isEmpty ? word : line + " " + word
            if candidate.count <= fits || line.isEmpty {
                line = candidate
                rest = rest.dropFirst()
                continue
            }
            out.append(line)
            line = ""
            if out.count == lines - 1 { break }
        }
        if !rest.isEmpty { line = ([line] + rest).filter { !$0.isEmpty }.joined(separator: " ") }
        out.append(truncated(line, toWidth: width, fontSize: fontSize))
        return out
    }

    /// Milliseconds as seconds for people: `2`, `2.15`.
    static func seconds(_ ms: Int) -> String {
        ms % 1000 == 0 ? "\(ms / 1000)" : n(Double(ms) / 1000, decimals: 3)
    }

    /// A stable colour per Now Playing owner, so one owner keeps its colour across the picture.
    static func ownerColour(_ id: StreamID) -> String {
        let palette = ["#1a7f37", "#8250df", "#bc4c00", "#0969da", "#bf3989", "#116329", "#6639ba", "#953800"]
        var hash: UInt32 = 2_166_136_261
        for byte in id.rawValue.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return palette[Int(hash % UInt32(palette.count))]
    }
}

/// A coordinate with at most `decimals` decimals, without exponents or a trailing `.0`.
private func n(_ value: Double, decimals: Int = 2) -> String {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    if rounded == rounded.rounded(), abs(rounded) < 1e15 { return String(Int(rounded)) }
    return "\(rounded)"
}
