import EventLoop
import Foundation
import PulseBackend
import SoundBackend

/// A ``PulseConnection`` on a loop the test runs itself (no daemon): records what the connection
/// reports, sink inputs and source outputs alike, so a test can run the loop until something arrived.
final class LoopConnection {
    let loop = MainLoop()
    let pulse: PulseConnection
    var initialStreams: [SinkInput]?
    var initialCaptures: [SourceOutput]?
    /// In delivery order: "streams", "captures" for the two initial snapshots.
    var initialOrder: [String] = []
    var streamsAdded: [SinkInput] = []
    var streamsRemoved: [UInt32] = []
    var capturesAdded: [SourceOutput] = []
    var capturesChanged: [SourceOutput] = []
    var capturesRemoved: [UInt32] = []
    var errors: [String] = []
    /// The connection's state, as last told.
    var state: PulseConnection.State = .unconnected
    /// When the server's announcement of each new sink input entered the process (monotonic µs).
    var announced: [UInt32: UInt64] = [:]

    init() {
        pulse = PulseConnection(loop: loop, applicationName: "audio-policyd meter tests")
        pulse.onStreamTimed = { [unowned self] index, at, _ in announced[index] = at }
        pulse.onNews = { [unowned self] news in
            switch news {
            case let .state(new): state = new
            case let .initialStreams(list): initialStreams = list; initialOrder.append("streams")
            case let .initialCaptures(list): initialCaptures = list; initialOrder.append("captures")
            case let .streamAdded(input): streamsAdded.append(input)
            case let .streamRemoved(index): streamsRemoved.append(index)
            case let .captureAdded(capture): capturesAdded.append(capture)
            case let .captureChanged(capture): capturesChanged.append(capture)
            case let .captureRemoved(index): capturesRemoved.append(index)
            case let .error(message): errors.append(message)
            case .streamChanged, .sinkAdded, .sinkChanged, .sinkRemoved: break
            }
        }
    }

    /// Connects and waits for both initial snapshots.
    func connect() throws {
        pulse.connect()
        let done = runLoop(until: {
            self.initialCaptures != nil || { if case .failed = self.state { true } else { false } }()
        })
        guard done, state == .ready else {
            throw CommandFailure(description: "connection: \(state), snapshots: \(initialOrder)")
        }
    }

    /// Runs the loop until `condition` holds; false when `seconds` passed first.
    @discardableResult
    func runLoop(until condition: () -> Bool, seconds: Double = 5) -> Bool {
        var expired = false
        let deadline = MainLoop.Timer(loop: loop) { expired = true }
        deadline.schedule(after: UInt64(seconds * 1_000_000))
        while !condition(), !expired {
            guard loop.iterate() else { return false }
        }
        return condition()
    }

    /// Runs the loop for `seconds`.
    func run(for seconds: Double) {
        runLoop(until: { false }, seconds: seconds)
    }

    /// The sink input of process `pid`, once announced with its volume known.
    func awaitStream(ofProcess pid: Int32, seconds: Double = 5) throws -> SinkInput {
        var found: SinkInput?
        runLoop(until: {
            found = self.streamsAdded.last { $0.properties["application.process.id"] == String(pid) }
                ?? self.initialStreams?.last { $0.properties["application.process.id"] == String(pid) }
            return found != nil
        }, seconds: seconds)
        guard let found else { throw CommandFailure(description: "no sink input of pid \(pid) announced") }
        return found
    }

    /// The source output of process `pid`, once announced.
    func awaitCapture(ofProcess pid: Int32, seconds: Double = 5) throws -> SourceOutput {
        var found: SourceOutput?
        runLoop(until: {
            found = self.capturesAdded.last { $0.processID == pid }
            return found != nil
        }, seconds: seconds)
        guard let found else {
            throw CommandFailure(description: "no source output of pid \(pid) announced; seen: \(capturesAdded)")
        }
        return found
    }

    /// Waits until the source output of `pid` records (uncorked, on a source) and returns that snapshot.
    /// pipewire-pulse announces a recording corked and on no source (PA_INVALID_INDEX) before it links
    /// it; what that first snapshot says about its source is not the recording's.
    func awaitRecording(ofProcess pid: Int32, seconds: Double = 5) throws -> SourceOutput {
        var found: SourceOutput?
        runLoop(until: {
            found = (self.capturesAdded + self.capturesChanged).last {
                $0.processID == pid && !$0.corked && $0.sourceIndex != UInt32.max
            }
            return found != nil
        }, seconds: seconds)
        guard let found else {
            throw CommandFailure(description: "no recording of pid \(pid); seen: \(capturesAdded) \(capturesChanged)")
        }
        return found
    }
}

/// Test sounds beside ``Tone``: digital silence.
enum TestSounds {
    /// 30 s of digital silence (48 kHz, stereo, 16 bit).
    static func silence() throws -> URL {
        let url = TestEnvironment.scratch.appendingPathComponent("silence-30s.wav")
        if !FileManager.default.fileExists(atPath: url.path) {
            let partial = url.deletingPathExtension().appendingPathExtension("partial.wav")
            try run("sox", "-n", "-r", "48000", "-c", "2", "-b", "16", partial.path, "trim", "0", "30")
            try? FileManager.default.moveItem(at: partial, to: url)
        }
        return url
    }
}
