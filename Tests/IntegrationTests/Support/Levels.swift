import Foundation

/// What the test sink actually played: its monitor recorded for a window, and the level of one
/// frequency band in it measured with sox.
enum Levels {
    static let rate = 48000
    static let channels = 2
    /// Cut off the start (what was under way when we asked; the filter's ramp-in) and the end (its ramp-out; a
    /// tone cut off mid-cycle spreads into every band) before measuring.
    static let lead = 0.15
    static let tail = 0.1

    /// Records the next `seconds` the sink plays (plus the lead and tail that are measured away); with
    /// `past`, the recording starts that many seconds back (what the sink played just before the call,
    /// kept by the monitor: up to 10 s), so a short sound that came before the test could ask is in it.
    static func record(seconds: Double, past: Double = 0) throws -> Recording {
        let frames = Int((lead + past + seconds + tail) * Double(rate))
        let frameBytes = channels * MemoryLayout<Float>.size
        let data = try Monitor.shared.get().next(bytes: frames * frameBytes, back: Int(past * Double(rate)) * frameBytes,
                                                 timeout: seconds + 5)
        let folder = try TestEnvironment.temporaryFolder("audio-policyd-rec")
        let file = folder.appendingPathComponent("monitor.f32")
        try data.write(to: file)
        return Recording(file: file, seconds: past + seconds)
    }
}

/// One `parec` on the sink's monitor for the whole test process, read continuously.
///
/// Started once because PulseAudio's null sink renders up to 2 s ahead while nobody asks for low
/// latency: a recorder started afresh waits that long for its first byte. Kept running, it holds the
/// sink at 20 ms, so what is recorded is what the sink played a few ms ago. Killed when the process exits.
final class Monitor: @unchecked Sendable {
    /// The running monitor; started again if its parec ended (a test restarted the sound server).
    static var shared: Result<Monitor, any Error> {
        sharedLock.lock()
        defer { sharedLock.unlock() }
        if let current = sharedMonitor, case let .success(monitor) = current, !monitor.hasEnded { return current }
        let made = Result { try Monitor() }
        sharedMonitor = made
        return made
    }

    private static let sharedLock = NSLock()
    nonisolated(unsafe) private static var sharedMonitor: Result<Monitor, any Error>?

    private var hasEnded: Bool {
        condition.lock()
        defer { condition.unlock() }
        return ended
    }

    private let child: Child
    private let condition = NSCondition()
    /// Bytes received since the start; `kept` holds the last of them, from `keptFrom` on.
    private var received = 0
    private var kept = Data()
    private var keptFrom = 0
    private var ended = false
    /// The last 10 s (up to 20 s) are kept.
    private static let keepLimit = 10 * Levels.rate * Levels.channels * MemoryLayout<Float>.size

    private init() throws {
        let pipe = Pipe()
        child = try Child(["parec", "-d", "\(SoundServer.sink).monitor", "--raw", "--format=float32le",
                           "--rate=\(Levels.rate)", "--channels=\(Levels.channels)", "--latency-msec=20"],
                          standardOutput: pipe)
        let pid = child.pid
        Self.pidToKill = pid
        atexit { if Monitor.pidToKill > 0 { kill(Monitor.pidToKill, SIGKILL) } }
        let handle = pipe.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let data = handle.availableData
                condition.lock()
                if data.isEmpty {
                    ended = true
                } else {
                    received += data.count
                    kept.append(data)
                    // In bulk, not on every read: dropping the front of the buffer copies the rest.
                    if kept.count > 2 * Self.keepLimit {
                        let drop = kept.count - Self.keepLimit
                        kept.removeFirst(drop)
                        keptFrom += drop
                    }
                }
                condition.broadcast()
                condition.unlock()
                if data.isEmpty { return }
            }
        }
    }

    nonisolated(unsafe) private static var pidToKill: Int32 = 0

    /// The next `bytes` bytes the sink plays from `back` bytes ago on (from now on by default; from
    /// the oldest byte kept if fewer were kept).
    func next(bytes: Int, back: Int = 0, timeout: Double) throws -> Data {
        let deadline = Date() + timeout
        condition.lock()
        defer { condition.unlock() }
        let frame = Levels.channels * MemoryLayout<Float>.size
        // Not before the oldest whole frame kept.
        let start = max(keptFrom + (frame - keptFrom % frame) % frame, received - back)
        while received < start + bytes {
            if ended { throw CommandFailure(description: "parec on the monitor stopped (exit \(child.exitCode ?? -1))") }
            if !condition.wait(until: deadline) {
                throw CommandFailure(description: "the monitor delivered \(received - start) of \(bytes) bytes in \(timeout) s")
            }
        }
        // Start on a whole frame of the stream (reads need not end on one).
        let from = start - start % frame - keptFrom
        return kept.subdata(in: kept.index(kept.startIndex, offsetBy: from)..<kept.index(kept.startIndex, offsetBy: from + bytes))
    }
}

/// A recording of the test sink's monitor (raw float32 stereo at 48 kHz), deleted with this value.
final class Recording {
    let file: URL
    let seconds: Double

    init(file: URL, seconds: Double) {
        self.file = file
        self.seconds = seconds
    }

    deinit { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }

    /// The RMS level (dBFS, both channels) of the band `band` (Hz), lead and tail cut off;
    /// `-infinity` for digital silence.
    func level(_ band: ClosedRange<Int>) throws -> Double {
        // sox writes its stats to standard error.
        let stats = try run("sh", "-c", "sox -t raw -r \(Levels.rate) -e floating-point -b 32 -c \(Levels.channels) "
            + "'\(file.path)' -n "
            // A narrow transition band: sox's default takes 4 dB off a 440 Hz tone in 300-600.
            + "sinc -t 50 \(band.lowerBound)-\(band.upperBound) "
            + "trim \(Levels.lead) -\(Levels.tail) stats 2>&1")
        return try Self.rmsLevel(in: stats)
    }

    /// The level of `band` (as ``level(_:)``) in each `window` seconds of the recording, lead and tail cut
    /// off: how it went over time.
    func levels(_ band: ClosedRange<Int>, every window: Double) throws -> [Double] {
        let count = Int(((seconds - Levels.tail) / window).rounded(.down))
        return try (0..<count).map { index in
            let stats = try run("sh", "-c", "sox -t raw -r \(Levels.rate) -e floating-point -b 32 -c \(Levels.channels) "
                + "'\(file.path)' -n sinc -t 50 \(band.lowerBound)-\(band.upperBound) "
                + "trim \(Levels.lead + Double(index) * window) \(window) stats 2>&1")
            return try Self.rmsLevel(in: stats)
        }
    }

    static func rmsLevel(in stats: String) throws -> Double {
        guard let line = stats.split(separator: "\n").first(where: { $0.hasPrefix("RMS lev dB") }),
              let first = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(3).first else {
            throw CommandFailure(description: "no `RMS lev dB` in sox's stats: \(stats)")
        }
        if first == "-inf" { return -.infinity }
        guard let value = Double(first) else {
            throw CommandFailure(description: "unreadable level \(first) in: \(line)")
        }
        return value
    }
}
