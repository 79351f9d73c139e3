import AudioPolicy

/// The engine's names for the sound server's streams: a sink input by its index, a capture (source
/// output) as `capture-INDEX`, so the two never collide.
extension StreamID {
    init(sinkInput index: UInt32) { self.init(String(index)) }

    init(capture index: UInt32) { self.init("capture-\(index)") }

    /// The sink input this names, if it names one.
    var sinkInput: UInt32? { UInt32(rawValue) }
}
