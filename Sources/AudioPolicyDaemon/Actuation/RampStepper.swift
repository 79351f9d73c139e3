import AudioPolicy

/// Steps the volume ramps in progress: which streams need a new volume now, and when the next step is
/// due. The daemon's single timer runs only while this has work.
struct RampStepper {
    /// What to do once a ramp arrives.
    enum Completion: Equatable {
        case none
        /// The mute fallback: mute once faded to silence.
        case mute
    }

    struct Running {
        var ramp: Ramp
        var completion: Completion
    }

    /// Milliseconds between steps: fine enough to sound smooth, coarse enough to cost little.
    static let stepInterval = 15.0

    private(set) var running: [UInt32: Running] = [:]
    /// How many ramps were ever started: lets a caller tell whether a batch of commands started any.
    private(set) var startedCount = 0

    var isIdle: Bool { running.isEmpty }

    mutating func start(_ index: UInt32, _ ramp: Ramp, then completion: Completion = .none) {
        running[index] = Running(ramp: ramp, completion: completion)
        startedCount += 1
    }

    mutating func cancel(_ index: UInt32) {
        running[index] = nil
    }

    /// The factor each running ramp has at `now`, and the completions of ramps that have arrived.
    mutating func step(at now: Double) -> (factors: [(UInt32, Double)], completed: [(UInt32, Completion)]) {
        var factors: [(UInt32, Double)] = []
        var completed: [(UInt32, Completion)] = []
        for (index, entry) in running.sorted(by: { $0.key < $1.key }) {
            factors.append((index, entry.ramp.value(at: now)))
            if now >= Double(entry.ramp.end) {
                running[index] = nil
                completed.append((index, entry.completion))
            }
        }
        return (factors, completed)
    }

    /// When the next step is due (ms), or nil when nothing runs.
    func nextStep(after now: Double) -> Double? {
        guard let end = running.values.map({ Double($0.ramp.end) }).min() else { return nil }
        return min(now + Self.stepInterval, max(now, end))
    }
}
