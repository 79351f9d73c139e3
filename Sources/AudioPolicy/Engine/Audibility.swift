/// Whether a stream is making sound, as its monitor says, and how much of its grace it has used.
///
/// Apps keep streams open and silent (a browser tab holding an AudioContext, speech-dispatcher between
/// phrases, Chromium for seconds after a ping, a call while nobody talks), so an open stream is not
/// heard audio. A stream counts as audible when it starts, until measured otherwise: a prompt ducks
/// the music at once, before any meter has spoken. A primary stream's grace counts audible time only,
/// and a stream silent for its class's `release-after` stops interrupting.
struct Audibility: Hashable, Sendable {
    /// What the stream's monitor last said (true until measured otherwise).
    private(set) var audible = true
    /// Whether it may ever have been heard: false once the first measurement found it silent, until a
    /// later one finds sound. A stream never heard never takes Now Playing.
    private(set) var heard = true
    /// Whether any measurement has come in since it started sounding.
    private var measured = false
    /// When it started sounding: created, or playing again after a pause.
    private(set) var soundStartedAt: Milliseconds
    /// When the current audible run began (nil while silent).
    private var audibleSince: Milliseconds?
    /// When it fell silent (nil while audible). A stream found silent at its first measurement has been
    /// silent since it started sounding.
    private(set) var silentSince: Milliseconds?
    /// Audible time counted towards the grace before the current audible run.
    private var banked: Milliseconds = 0
    /// Since when a meter runs on the stream whose first verdict has not come in (nil: none pending).
    /// A meter hears only what the server renders after it starts, which can be seconds behind a
    /// stream with a large buffer: a stream is not escalated on an assumption a verdict is coming to
    /// settle.
    private(set) var verdictPendingSince: Milliseconds?

    /// How long a pending verdict holds an escalation back before the stream is taken as audible (a meter
    /// that never speaks must not keep new music from replacing the old).
    static let verdictWait: Milliseconds = 3000

    init(at now: Milliseconds) {
        soundStartedAt = now
        audibleSince = now
    }

    /// The stream starts sounding anew (created, uncorked, resumed): the grace starts over, and it
    /// counts as audible until measured otherwise.
    mutating func restart(at now: Milliseconds) {
        self = Audibility(at: now)
    }

    /// The grace starts over without assuming sound (a stream classified anew as primary).
    mutating func restartGrace(at now: Milliseconds) {
        banked = 0
        if audible { audibleSince = now }
    }

    /// A meter started on the stream: its verdict is pending.
    mutating func meterStarted(at now: Milliseconds) {
        verdictPendingSince = now
    }

    /// Whether a verdict pending since `verdictPendingSince` still holds an escalation back at `now`.
    func holdsEscalation(at now: Milliseconds) -> Bool {
        verdictPendingSince.map { now < $0 + Self.verdictWait } ?? false
    }

    /// A measurement: returns whether anything changed.
    mutating func measured(audible nowAudible: Bool, at now: Milliseconds) -> Bool {
        let first = !measured
        measured = true
        verdictPendingSince = nil
        if nowAudible {
            heard = true
            guard !audible else { return first }
            audible = true
            audibleSince = now
            silentSince = nil
            return true
        }
        guard audible else { return false }
        audible = false
        if first {
            // Silent from the start: the time it was assumed audible was never heard.
            heard = false
            banked = 0
            silentSince = soundStartedAt
        } else {
            banked += now - (audibleSince ?? now)
            silentSince = now
        }
        audibleSince = nil
        return true
    }

    /// When `grace` ms of audible time will have passed, if the stream keeps sounding; nil while silent.
    func graceEnds(after grace: Milliseconds) -> Milliseconds? {
        audibleSince.map { $0 + max(0, grace - banked) }
    }

    /// When a stream silent since ``silentSince`` stops interrupting under `releaseAfter` (nil: never).
    func releasedAt(after releaseAfter: Milliseconds?) -> Milliseconds? {
        guard !audible, let releaseAfter, let silentSince else { return nil }
        return silentSince + releaseAfter
    }
}
