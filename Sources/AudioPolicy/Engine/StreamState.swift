/// What a stream is doing, as a user would describe it.
public enum StreamState: String, Hashable, Sendable, CaseIterable, Codable {
    case playing
    /// Playing, with its volume lowered by the policy.
    case ducked
    /// Paused by its player, the user, or the policy (possibly through the mute fallback).
    case paused
    /// A hook's interruption that waits for a call to end (``Event/interruptionAfterCall(token:className:_:)``):
    /// it interrupts nothing yet.
    case waiting
    case ended
}
