/// When the sound server goes away, its streams go with it.
extension Engine {
    /// Forgets every stream that has ended, at once: called when the sound server went away, after
    /// each of its streams was ended. Unlike a stream that ends on a running server, they do not linger
    /// for their class's hold — nothing they did is heard any more, and a prompt that vanished with the
    /// old server must not duck the first music on the new one. Hooks' interruptions (begun over the
    /// control socket, not on the server) stay.
    public mutating func forgetEndedStreams(at now: Milliseconds) -> [Command] {
        for id in streams.ids {
            guard let stream = streams[id], !stream.isHook, stream.endedAt != nil else { continue }
            drop(id)
        }
        var out: [Command] = []
        reconcile(now: now, into: &out)
        return out
    }
}
