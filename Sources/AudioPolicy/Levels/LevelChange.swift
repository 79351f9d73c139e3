/// Who changed a stream's volume or mute, relative to the previous snapshot of it: the levels stage's
/// verdict on a backend's report (``OwnWrites/classify(previous:current:now:)``).
public enum LevelChange: Equatable, Sendable {
    /// Volume (to one raw unit) and mute are as before.
    case none
    /// Every change is the echo of a write of ours.
    case ours
    /// Something else changed volume or mute: the user, a mixer, the app.
    case theirs
}
