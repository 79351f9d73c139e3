import AudioPolicy

/// Steps the volume ramps in progress: which streams need a new volume now, and when the next step is
/// due. The daemon's single timer runs only while this has work.
///
/// A stream whose backend moves along a ramp by itself (``SoundBackend/StreamServer/rampsByItself(_:)``:
/// the ALSA plugin, sample by sample) is handed its ramp whole once, and is due again only when the
/// ramp ends, for its completion; every other stream is written each ``stepInterval``.
struct RampStepper {
    /// What to do once a ramp arrives.
    enum Completion: Equatable {
        case none
        /// The mute fallback: mute once faded to silence.
        case mute
    }

    /// Who moves the stream along its ramp.
    enum Carrier: Equatable {
        /// The daemon, one write per step.
        case steps
        /// The backend, by itself, once it has been handed the ramp (`handed`).
        case backend(handed: Bool)
    }

    struct Running {
        var ramp: Ramp
        var completion: Completion
        var carrier: Carrier
    }

    /// Milliseconds between steps: fine enough to sound smooth, coarse enough to cost little.
    static let stepInterval = 15.0

    private(set) var running: [UInt32: Running] = [:]
    /// How many ramps were ever started: lets a caller tell whether a batch of commands started any.
    private(set) var startedCount = 0

    var isIdle: Bool { running.isEmpty }

    mutating func start(_ index: UInt32, _ ramp: Ramp, then completion: Completion = .none, byBackend: Bool = false) {
        running[index] = Running(ramp: ramp, completion: completion, carrier: byBackend ? .backend(handed: false) : .steps)
        startedCount += 1
    }

    mutating func cancel(_ index: UInt32) {
        running[index] = nil
    }

    /// What is due at `now`: the factor each stepped ramp has at `now + ahead` (a ramp just started is
    /// written one step ahead, so its first change goes out at once rather than a tick later), the ramps
    /// to hand to their backend whole, and the completions of ramps that have arrived.
    mutating func step(at now: Double, ahead: Double = 0)
        -> (factors: [(UInt32, Double)], whole: [(UInt32, Ramp)], completed: [(UInt32, Completion)]) {
        var factors: [(UInt32, Double)] = []
        var whole: [(UInt32, Ramp)] = []
        var completed: [(UInt32, Completion)] = []
        for (index, entry) in running.sorted(by: { $0.key < $1.key }) {
            switch entry.carrier {
            case .steps:
                factors.append((index, entry.ramp.value(at: now + ahead)))
                if now + ahead >= Double(entry.ramp.end) {
                    running[index] = nil
                    completed.append((index, entry.completion))
                }
            case let .backend(handed):
                if !handed {
                    whole.append((index, entry.ramp))
                    running[index]?.carrier = .backend(handed: true)
                }
                if now >= Double(entry.ramp.end) {
                    running[index] = nil
                    completed.append((index, entry.completion))
                }
            }
        }
        return (factors, whole, completed)
    }

    /// When the next step is due (ms), or nil when nothing runs: a stepped ramp's next step, a whole
    /// ramp's end (or now, while it has not been handed over).
    /// Armed after every batch with up to 200 ramps running: one pass, no array built.
    func nextStep(after now: Double) -> Double? {
        var next: Double?
        for entry in running.values {
            let end = Double(entry.ramp.end)
            let due: Double = switch entry.carrier {
            case .steps: min(now + Self.stepInterval, max(now, end))
            case .backend(handed: false): now
            case .backend(handed: true): max(now, end)
            }
            next = min(next ?? due, due)
        }
        return next
    }
}
