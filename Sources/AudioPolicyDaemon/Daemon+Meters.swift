import AudioPolicy

/// Measuring streams' sound for the engine: a peak meter per stream the engine asks about.
extension Daemon {
    /// Starts or stops measuring a stream (``Command/measure(_:_:)``).
    func measure(_ index: UInt32, _ on: Bool) {
    }
}
