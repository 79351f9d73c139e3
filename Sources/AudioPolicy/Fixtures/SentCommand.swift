/// The names a fixture's `sent` and `not-sent` expectations give the engine's commands to one stream.
///
/// A state, a factor and a mute say where the engine left a stream, not what it asked the shell to do
/// on the way: a start at one of our saved levels put back, a saved entry repaired, a level adopted as
/// the stream's own leave the engine's view of the stream as it was. These names let a fixture say that
/// such a command went out, or did not (its control), at a moment of the replay.
public enum SentCommand {
    /// Every name, in the order docs/fixtures.md lists them.
    public static let names = [
        "ramp", "mute", "hold", "unmute", "pause", "resume", "yield-volume", "adopt-level", "rewrite-level",
        "put-back", "put-back-level", "put-back-unmute", "repair-saved", "measure", "stop-measuring",
    ]

    /// The stream `command` is for and the names it answers to (`put-back` and, for what it does,
    /// `put-back-level` and `put-back-unmute`); nil for a command about no one stream (Now Playing, a
    /// decision, a hook's interruption beginning).
    public static func names(of command: Command) -> (stream: StreamID, names: [String])? {
        switch command {
        case let .ramp(id, _, _, _): (id, ["ramp"])
        case let .mute(id, _, _): (id, ["mute"])
        case let .hold(id): (id, ["hold"])
        case let .unmute(id, _, _): (id, ["unmute"])
        case let .pause(id, _): (id, ["pause"])
        case let .resume(id, _): (id, ["resume"])
        case let .yieldVolume(id): (id, ["yield-volume"])
        case let .adoptLevel(id): (id, ["adopt-level"])
        case let .rewriteLevel(id): (id, ["rewrite-level"])
        case let .putBack(id, level, unmute):
            (id, ["put-back"] + (level ? ["put-back-level"] : []) + (unmute ? ["put-back-unmute"] : []))
        case let .repairSaved(id): (id, ["repair-saved"])
        case let .measure(id, on): (id, [on ? "measure" : "stop-measuring"])
        case .interruptionBegan, .nowPlaying, .decision: nil
        }
    }
}
