/// What a sound server saves of a stream's level and mute as its app's or role's entry, and when: the
/// one piece of backend knowledge the levels stage needs, as a small named model of each server.
///
/// Both servers save every volume written to a stream, the daemon's included, and hand it to the key's
/// next stream; they differ in the mute (`../shared/PIPEWIRE.md`, found by the soak on each):
public enum ServerSaving: String, Sendable, CaseIterable {
    /// PulseAudio's module-stream-restore: a stream's mute is saved only once a client set it or the
    /// server restored it at the stream's start; from then on it is saved again with *every* change of
    /// that stream (its level, a move, a cork), and otherwise the entry keeps its older mute.
    case pulseAudio = "pulseaudio"
    /// WirePlumber's restore-stream (through pipewire-pulse): the whole state, volume and mute, is saved
    /// whenever the stream's level or mute changes (after a second of quiet), whoever changed it.
    case wirePlumber = "pipewire"

    /// Whether every change of a stream's level saves its mute too, whoever set that mute.
    public var savesMuteWithEveryChange: Bool { self == .wirePlumber }

    /// Whether a change of a stream that is not a change of its level (a move, a cork) saves its mute
    /// again, when its mute is one the server saves (``LevelOwnership/streamChanged(_:key:theirLevel:policyMuted:muted:)``).
    public var savesMuteWithAnyChange: Bool { self == .pulseAudio }

    /// Whether the saved entries it reads back are the ones it gives new streams. pipewire-pulse's read-back
    /// lags WirePlumber's state (the soak reports its entries as notes; a repair that kept a level it read
    /// wrote a stale 100 % over the user's: RecoveryTests on PipeWire), so a repair there keeps nothing it
    /// reads (``LevelOwnership/repairMute(of:saved:)``).
    public var readsBackSavedEntries: Bool { self == .pulseAudio }

    /// Whether a write of a saved entry (a repair) is applied before the server answers it: a stream
    /// announced after the answer starts from the entry as written. PulseAudio's module-stream-restore
    /// handles requests in order; pipewire-pulse answers once it has passed the entry on, and WirePlumber
    /// gives a stream created meanwhile the entry the write replaced (the 40 s churn on PipeWire: a music
    /// stream announced after a repair's answer still came up at the faded-out stream's silence and mute).
    public var appliesEntriesBeforeAnswering: Bool { self == .pulseAudio }
}
