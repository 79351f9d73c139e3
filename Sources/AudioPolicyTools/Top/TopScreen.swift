import AudioPolicy
import AudioPolicyDaemon
import ControlProtocol
import FoundationEssentials
import FoundationGaps
import Glibc

/// What `audio-policyd top` draws, as lines of text: a pure function of the daemon's status, so it
/// is the same on a terminal, in a pipe and in tests.
///
/// Each stream gets a volume bar: the part that is heard (the user's level times the policy's
/// factor), then the part the policy takes away, up to the user's own level.
public struct TopScreen {
    /// How the screen may draw.
    public struct Style: Sendable {
        /// ANSI colours and attributes (a terminal); plain text otherwise.
        public var color: Bool
        /// Block characters (a UTF-8 locale); ASCII otherwise.
        public var unicode: Bool

        public init(color: Bool, unicode: Bool) {
            self.color = color
            self.unicode = unicode
        }

        public static let plain = Style(color: false, unicode: false)
    }

    public var status: StatusReport?
    /// Why there is no status (the daemon is not running, or did not answer).
    public var problem: String?
    /// Whether the view refreshes on the daemon's events (`subscribe`) rather than once a second.
    public var live = false
    public var width = 100
    public var height = 30
    public var now = Date()
    public var style = Style.plain
    /// The latest peak of each stream's meter (linear, 1 = 0 dBFS), by sink input; top measures them on
    /// a connection of its own (``TopMeters``). Empty without meters: the column is left out.
    public var peaks: [UInt32: Float] = [:]
    /// Whether top measures streams (it has a sound server connection): the METER column is shown.
    public var metering = false

    public init() {}

    // MARK: - Drawing

    /// The screen, one string per line, each at most ``width`` visible characters.
    public func lines() -> [String] {
        var out: [Line] = []
        let clock = Self.time(now)
        let server = status.map { $0.server ?? "not connected to a sound server" } ?? "daemon not reachable"
        out.append(Line(fit("audio-policyd top - \(server)", width - clock.count - 1) + " " + clock, .title))
        guard let status else {
            out.append(Line(""))
            out.append(Line(problem ?? "no status", .warning))
            out.append(Line("retrying every second; q quits", .dim))
            return render(out)
        }
        out.append(Line(fit("policy: \(status.policy)", width), .dim))
        let owner = status.nowPlaying.map { "\($0.application)\($0.pid.map { " (pid \($0))" } ?? "")" } ?? "nobody"
        out.append(Line(fit("now playing: \(owner)", width), .bold))
        out.append(Line(""))

        let meterWidth = metering ? Self.meterCells + 8 : 0
        let bar = max(10, min(30, width - 72 - meterWidth))
        let header = pad("INDEX", 6) + pad("APPLICATION", 20) + pad("CLASS", 12) + pad("STATE", 14)
            + (metering ? pad("METER", meterWidth) : "") + pad("VOLUME", bar + 3) + "LEVEL"
        out.append(Line(fit(header, width), .header))
        let streams = status.streams
        if streams.isEmpty { out.append(Line("  (no streams)", .dim)) }
        for stream in streams {
            var state = stream.state.rawValue
            if stream.muted { state += " muted" }
            if stream.audible == false { state += " silent" }
            let id = stream.index.map(String.init) ?? "hook"
            let name = stream.application + (stream.spoken ? " (spoken)" : "")
            let meter = metering ? pad(meterText(stream.index.flatMap { peaks[$0] }), meterWidth) : ""
            let lead = pad(id, 6) + pad(name, 20) + pad(stream.class, 12) + pad(state, 14) + meter
            let (barText, barLine) = volumeBar(stream, cells: bar)
            let level = levelText(stream)
            let kind: Line.Kind = stream.muted || stream.state == .paused ? .dim
                : stream.state == .ducked ? .ducked : .normal
            out.append(Line(fit(lead + "[" + barText + "] " + level, width), kind, bar: barLine.map {
                (lead.count + 1, $0)
            }))
        }
        out.append(Line(""))
        let decisions = status.decisions ?? []
        out.append(Line(fit("last decisions", width), .header))
        let room = max(1, height - out.count - 2)
        if decisions.isEmpty { out.append(Line("  (none yet)", .dim)) }
        for decision in decisions.suffix(room).reversed() {
            let when = Self.time(Date(timeIntervalSince1970: decision.time))
            let who = pad("#\(decision.stream) \(decision.application)", 22)
            out.append(Line(fit("\(when)  \(who)\(decision.action) - \(decision.reason) [\(decision.class)]", width)))
        }
        while out.count < height - 1 { out.append(Line("")) }
        out = Array(out.prefix(max(1, height - 1)))
        out.append(Line(fit("q quit   " + (live ? "live (daemon events)" : "refresh 1 s"), width), .dim))
        return render(out)
    }

    // MARK: - Meter

    /// Cells of the peak meter, which spans ``meterFloor`` to 0 dBFS.
    static let meterCells = 6
    /// The bottom of the meter (dBFS): the level below which the daemon calls a stream silent.
    static let meterFloor: Float = -60

    /// A stream's peak as a short bar and its level in dBFS ("-12 dB"); "-inf" below the floor (a silent
    /// stream draws no bar); blank before its first peak.
    private func meterText(_ peak: Float?) -> String {
        guard let peak else { return "" }
        let full: Character = style.unicode ? "▮" : "|"
        let empty: Character = style.unicode ? "·" : "."
        let decibels = peak > 0 ? 20 * log10(peak) : -.infinity
        guard decibels >= Self.meterFloor else { return String(repeating: empty, count: Self.meterCells) + " -inf" }
        let lit = Int(((decibels - Self.meterFloor) / -Self.meterFloor * Float(Self.meterCells)).rounded(.up))
        let cells = min(Self.meterCells, max(1, lit))
        return String(repeating: full, count: cells) + String(repeating: empty, count: Self.meterCells - cells)
            + String(printf: " %3.0f dB", min(0, decibels))
    }

    // MARK: - Volume

    /// PulseAudio's percent for a linear amplitude (its volume scale is cubic).
    static func percent(_ linear: Double) -> Double { cbrt(max(0, linear)) * 100 }

    private func levelText(_ stream: StatusReport.Stream) -> String {
        guard let own = stream.volume else { return String(printf: "x%.2f", stream.factor) }
        let user = Self.percent(own)
        if stream.factor >= 0.9995 { return String(printf: "%3.0f%%", user) }
        let heard = Self.percent(own * stream.factor)
        let decibels = stream.factor > 0 ? String(printf: "%.0f dB", 20 * log10(stream.factor)) : "silent"
        return String(printf: "%3.0f%% -> %.0f%% ", user, heard) + "(\(decibels))"
    }

    /// The bar's text, and where the heard / taken-away parts end (for colouring).
    private func volumeBar(_ stream: StatusReport.Stream, cells: Int) -> (String, BarSplit?) {
        let full: Character = style.unicode ? "█" : "#"
        let taken: Character = style.unicode ? "░" : "-"
        let empty: Character = style.unicode ? "·" : "."
        guard let own = stream.volume else {
            return (String(repeating: "?", count: cells), nil)
        }
        // 0-100 %, or up to the user's level when it is louder.
        let scale = max(100, Self.percent(own))
        let userCells = Int((Self.percent(own) / scale * Double(cells)).rounded())
        let heard = stream.muted ? 0 : Self.percent(own * stream.factor)
        let heardCells = min(userCells, Int((heard / scale * Double(cells)).rounded()))
        let text = String(repeating: full, count: heardCells) + String(repeating: taken, count: userCells - heardCells)
            + String(repeating: empty, count: cells - userCells)
        return (text, BarSplit(heard: heardCells, user: userCells, cells: cells))
    }

    // MARK: - Text

    struct BarSplit {
        var heard: Int
        var user: Int
        var cells: Int
    }

    struct Line {
        enum Kind { case normal, title, header, bold, dim, warning, ducked }
        var text: String
        var kind: Kind = .normal
        /// Where the volume bar starts, and its parts.
        var bar: (Int, BarSplit)?

        init(_ text: String, _ kind: Kind = .normal, bar: (Int, BarSplit)? = nil) {
            self.text = text
            self.kind = kind
            self.bar = bar
        }
    }

    private func render(_ lines: [Line]) -> [String] {
        lines.map { line in
            guard style.color else { return line.text }
            let reset = "\u{1B}[0m"
            let attribute: String
            switch line.kind {
            case .normal: attribute = ""
            case .title: attribute = "\u{1B}[7m"
            case .header: attribute = "\u{1B}[1;4m"
            case .bold: attribute = "\u{1B}[1m"
            case .dim: attribute = "\u{1B}[2m"
            case .warning: attribute = "\u{1B}[1;33m"
            case .ducked: attribute = "\u{1B}[33m"
            }
            var text = line.text
            if line.kind == .title {
                text += String(repeating: " ", count: max(0, width - text.count))
            }
            if let (start, split) = line.bar, text.count >= start + split.cells {
                let characters = Array(text)
                let head = String(characters[..<start])
                let heard = String(characters[start..<(start + split.heard)])
                let taken = String(characters[(start + split.heard)..<(start + split.user)])
                let rest = String(characters[(start + split.user)...])
                return attribute + head + "\u{1B}[32m" + heard + "\u{1B}[31m" + taken + reset + attribute + rest + reset
            }
            return attribute.isEmpty ? text : attribute + text + reset
        }
    }

    private func pad(_ text: String, _ count: Int) -> String {
        let cut = fit(text, count - 1)
        return cut + String(repeating: " ", count: max(0, count - cut.count))
    }

    private func fit(_ text: String, _ count: Int) -> String {
        guard count > 0 else { return "" }
        return text.count <= count ? text : String(text.prefix(max(0, count - 1))) + (style.unicode ? "…" : "~")
    }

    static func time(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        return String(printf: "%02d:%02d:%02d", parts.tm_hour, parts.tm_min, parts.tm_sec)
    }
}
