import AudioPolicy

/// The engine the daemon runs: read by every part (as ``EngineReading``), fed only by ``Daemon``.
final class LiveEngine: EngineReading {
    /// Changed only by ``Daemon``: its `feed`, a policy reload and the stop.
    var engine: Engine {
        didSet { deadline = nil }
    }

    /// ``Engine/nextDeadline`` (a walk over every stream), kept until the engine changes: the timer is
    /// re-armed after every ramp step.
    private var deadline: Milliseconds??

    init(_ engine: Engine) {
        self.engine = engine
    }

    /// When the engine next wants a `.tick`, if ever.
    var nextDeadline: Milliseconds? {
        if let known = deadline { return known }
        let next = engine.nextDeadline
        deadline = .some(next)
        return next
    }
}
