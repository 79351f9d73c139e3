/// An app recording from a microphone, as ``Event/capture(_:_:monitor:corked:)`` reported it: whose it is, and the
/// properties that named the app (kept so that ``Engine/prelude()`` can tell a new engine about it).
struct Capture: Hashable, Sendable {
    /// The app the capture belongs to (``TrackedStream/app(of:_:_:)``): its playback is a call.
    var app: String
    var properties: Properties

    /// Whether a capture is an app recording from a microphone: uncorked (a softphone opens its capture
    /// corked before the call), from an input rather than a sink's monitor (that records what plays: a
    /// screen recorder, a visualiser), and no peak meter (``MeterMarker``).
    static func records(_ properties: Properties, monitor: Bool, corked: Bool) -> Bool {
        !monitor && !corked && !MeterMarker.isMeter(properties)
    }
}
