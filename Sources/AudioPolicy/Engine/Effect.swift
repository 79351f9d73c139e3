/// What the policy does to one stream at a moment: nothing, duck it to a factor, or pause it.
enum Effect: Hashable, Sendable {
    case none
    case duck(Double)
    case pause

    /// The stricter of two effects: pause beats any duck, a deeper duck beats a lighter one.
    func stricter(_ other: Effect) -> Effect {
        switch (self, other) {
        case (.pause, _), (_, .none): return self
        case (_, .pause), (.none, _): return other
        case let (.duck(a), .duck(b)): return a <= b ? self : other
        }
    }

    /// The policy factor this effect asks for while the stream plays.
    var factor: Double {
        if case let .duck(level) = self { return level }
        return 1
    }
}

/// How the engine paused a stream it means to resume.
enum PauseMechanism: Hashable, Sendable {
    /// Through the stream's player (MPRIS Pause / Play).
    case player
    /// Fade-and-mute, for a stream with no controllable player.
    case mute
}
