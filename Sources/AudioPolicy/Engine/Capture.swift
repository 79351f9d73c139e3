/// A live microphone capture, as ``Event/captureStarted(_:_:)`` reported it: whose it is, and the
/// properties that named the app (kept so that ``Engine/prelude()`` can tell a new engine about it).
struct Capture: Hashable, Sendable {
    /// The app the capture belongs to (``TrackedStream/app(of:_:_:)``): its playback is a call.
    var app: String
    var properties: Properties
}
