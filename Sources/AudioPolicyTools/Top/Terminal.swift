import AudioPolicyDaemon
import FoundationEssentials
import Glibc

/// The controlling terminal for a full-screen view: raw input, the alternate screen, a hidden cursor
/// — and all of it put back by ``restore()``, whatever way the view ends.
///
/// Only ANSI/VT100 sequences every terminal emulator (and tmux, screen, the Linux console, SSH
/// clients) understands: alternate screen (`?1049`), cursor visibility (`?25`), home and erase.
public final class Terminal {
    public let input: Int32
    public let output: Int32
    private var saved: termios?
    private var active = false

    public init(input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO) {
        self.input = input
        self.output = output
    }

    deinit { restore() }

    /// Whether output goes to a terminal (else: print once, plainly).
    public var isInteractive: Bool { isatty(output) == 1 }

    /// Rows and columns, from the terminal (or `LINES`/`COLUMNS`, or 24×80).
    public var size: (rows: Int, columns: Int) {
        var window = winsize()
        if ioctl(output, UInt(TIOCGWINSZ), &window) == 0, window.ws_row > 0, window.ws_col > 0 {
            return (Int(window.ws_row), Int(window.ws_col))
        }
        let environment = ProcessInfo.processInfo.environment
        return (environment["LINES"].flatMap(Int.init) ?? 24, environment["COLUMNS"].flatMap(Int.init) ?? 80)
    }

    /// Whether the locale takes UTF-8 (block characters for bars).
    public static var prefersUnicode: Bool {
        let environment = ProcessInfo.processInfo.environment
        let locale = environment["LC_ALL"].flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["LC_CTYPE"].flatMap { $0.isEmpty ? nil : $0 } ?? environment["LANG"] ?? ""
        return locale.uppercased().replacing("-", with: "").contains("UTF8")
    }

    /// Enters the full-screen mode: keys arrive one by one without echo (signals still work: Ctrl-C
    /// is SIGINT), the alternate screen is shown and the cursor hidden.
    public func enter() {
        guard !active else { return }
        active = true
        var mode = termios()
        if isatty(input) == 1, tcgetattr(input, &mode) == 0 {
            saved = mode
            mode.c_lflag &= ~tcflag_t(ICANON | ECHO)
            withUnsafeMutableBytes(of: &mode.c_cc) { cc in
                cc[Int(VMIN)] = 1
                cc[Int(VTIME)] = 0
            }
            tcsetattr(input, TCSANOW, &mode)
        }
        write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J")
    }

    /// Leaves the alternate screen, shows the cursor and puts the input mode back. Safe to call twice.
    public func restore() {
        guard active else { return }
        active = false
        write("\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l")
        if var mode = saved {
            tcsetattr(input, TCSANOW, &mode)
        }
    }

    /// Draws `lines` over the previous frame (home, each line erased to its end, the rest cleared),
    /// in one write, so the view refreshes in place without flicker.
    public func draw(_ lines: [String]) {
        var frame = "\u{1B}[H"
        for (number, line) in lines.enumerated() {
            frame += line + "\u{1B}[K" + (number == lines.count - 1 ? "" : "\r\n")
        }
        frame += "\u{1B}[J"
        write(frame)
    }

    public func write(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(output, $0.baseAddress, $0.count) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}
