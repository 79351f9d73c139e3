/// What the engine's walks over every stream look at first, kept beside each record in
/// ``StreamTable``: whether the stream is live, a hook's, its class, whether the engine has left it
/// alone, and whether anything may be due for it.
///
/// Why beside the record: every event walks all the streams several times (reconciliation, the
/// measurements, the deadline scans), and most of them are passed over at the first look. Read from
/// the records themselves, each look reached into a record of several cache lines and its shared
/// identity elsewhere in memory; in the daemon, woken with cold caches, those walks were a large part
/// of the engine's share of a prompt among 200 streams. These facts of all 200 fit in a few kilobytes,
/// read in order.
struct StreamGlance: Sendable, Equatable {
    var isLive: Bool
    var isHook: Bool
    var className: String
    var kind: InterruptionKind
    /// No effect and no user override in force.
    var isUntouched: Bool
    /// Whether a deadline may fall due for it (``Engine/nextDeadline``), or a scan for what is due may
    /// pick it: it ended (its hold), its grace may run out, it has an output loss, a Pause it was asked
    /// for may time out, or its silence may end what it interrupts. False only where none of them can.
    var mayBeDue: Bool

    init(_ stream: TrackedStream) {
        let cls = stream.interruptionClass
        isLive = stream.isLive
        isHook = stream.isHook
        className = cls.name
        kind = cls.kind
        isUntouched = stream.effect == .none && !stream.userOwnsVolume && !stream.userOwnsPlayback
        mayBeDue = stream.endedAt != nil
            || (cls.kind == .primary && !stream.escalated && stream.playing && stream.pausedBy == nil)
            || stream.outputLoss != nil
            || stream.pauseAskedAt != nil
            || (stream.playing && stream.silenceEndsInterruption != nil)
    }
}
