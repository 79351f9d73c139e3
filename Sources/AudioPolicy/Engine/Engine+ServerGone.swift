/// When the sound server goes away, its streams go with it.
extension Engine {
    /// Forgets every stream that has ended, at once (``Event/serverGone``): unlike a stream that ends on
    /// a running server, they do not linger for their class's hold. Hooks' interruptions stay.
    mutating func forgetEndedStreams() {
        for id in streams.ids {
            guard let stream = streams[id], !stream.isHook, stream.endedAt != nil else { continue }
            drop(id)
        }
    }
}
