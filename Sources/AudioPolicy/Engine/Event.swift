/// Something that happened, fed to ``Engine/handle(_:at:)``. The shell turns server callbacks, player
/// signals and socket requests into events; fixtures spell them out.
public enum Event: Hashable, Sendable {
    /// A stream appeared. `player` names its app's controllable player, if it has one; without one,
    /// pausing falls back to fade-and-mute. `playing` is false for a stream created corked (browsers,
    /// WebRTC engines and softphones create theirs so; pipewire-pulse shows every new stream corked for
    /// its first milliseconds): it interrupts nothing until it first plays (``playback(_:playing:)``).
    /// `muted` is true for a stream that is muted, by its user or its app, when it is first seen (the
    /// server restored the user's mute for its app or role, or the daemon started after the user muted
    /// it): the mute is theirs, so the mute fallback leaves it alone and never unmutes it after. Told
    /// with the start, not after it, because the engine decides about the stream as it starts.
    /// `held` is true for a stream an earlier run of the daemon held muted because its output went away
    /// (recovered from that run's journal; muted, and not `muted` by its user): it stays held until the
    /// user acts, as if this engine had held it, rather than being heard on the speakers after a crash.
    /// `output` is where it starts, when the server tells it with the start: the same as a
    /// ``streamMoved(_:to:)`` right after, decided in one go (a new stream is weighed against every other
    /// once, not twice, on the way to a prompt's duck).
    case streamStarted(StreamID, Properties, player: PlayerID?, playing: Bool = true, muted: Bool = false,
                       held: Bool = false, output: OutputID? = nil)
    /// The server started the stream at a level or mute it saved from one of the daemon's writes to
    /// another stream of its key (``StartOrigin``): told right after ``streamStarted(_:_:player:playing:muted:held:output:)``,
    /// or when pipewire-pulse tells the start's level late. `levelAway`: its start level is not its own
    /// and it can be written; `mutedByUs`: its mute is our saved one, not its user's. The engine answers
    /// with ``Command/putBack(_:level:unmute:)`` for what its own decision left untouched.
    case startedAtOurSave(StreamID, levelAway: Bool, mutedByUs: Bool)
    /// The server told the stream's level and mute only after it started (pipewire-pulse announces a new
    /// stream with every channel at 0 and tells its restored volume a few ms later), `muted` or not. Nothing
    /// could be written to it meanwhile (a duck computed from the placeholder 0 would silence it), so the
    /// engine restates what it asks of the stream now: its duck or fade as a ramp from where it is, or the
    /// policy's mute the stream arrived without. A mute its user gave it comes first, as
    /// ``userMute(_:_:)``.
    case levelTold(StreamID, muted: Bool)
    /// A stream's properties changed (it may be classified anew).
    case streamChanged(StreamID, Properties)
    /// A stream went away.
    case streamEnded(StreamID)
    /// The user set the stream's own volume (linear). The user wins over any duck. `overtakesOurWrite`: a
    /// volume write of ours was still on its way when the server showed the change, and lands after it
    /// (pipewire-pulse shows a write only once it has answered it; found by a 120 s churn on PipeWire:
    /// a fade-in step left a music stream at the step over its user's level).
    case userVolume(StreamID, Double, overtakesOurWrite: Bool = false)
    /// The user muted or unmuted the stream. Unmuting a stream the policy muted gives it back to the user.
    case userMute(StreamID, Bool)
    /// The stream's player reported Playing (`true`) or Paused (`false`), by the user's hand or its own.
    case playback(StreamID, playing: Bool)
    /// A hook asked for an interruption of class `className` before (or without) any stream.
    case interruptionBegan(token: StreamID, className: String, Properties)
    /// A hook asked for an interruption of class `className` that begins only once no call is on
    /// (Android's delayed audio focus): at once when none is, else when the last call is over
    /// (``Command/interruptionBegan(_:)`` says when). ``interruptionEnded(token:)`` withdraws it meanwhile.
    case interruptionAfterCall(token: StreamID, className: String, Properties)
    /// A hook's interruption ended (or, still waiting for a call to end, was withdrawn).
    case interruptionEnded(token: StreamID)
    /// The stream's controllable player became known (or, with nil, is no longer known). The stream is
    /// classified anew: whether it has a player decides whether it is media (the pseudo-property `player`).
    case playerChanged(StreamID, PlayerID?)
    /// A player said what it does (``PlayerStatus``). A stream counts as media through its player only
    /// when that player says ``PlayerStatus/playing`` as the stream starts or within ``Engine/playerWindow``
    /// of its start of play; a player that is Paused, Stopped or says nothing makes nothing media. A player
    /// never told of counts (a hook's claim, a fixture that says nothing of its players).
    case playerStatus(PlayerID, PlayerStatus)
    /// The stream's player ignored Pause (still Playing a while after it): fall back to fade-and-mute.
    case pauseIgnored(StreamID)
    /// A player left the bus (its app quit): its app no longer holds Now Playing, and its streams can
    /// only be paused by the mute fallback from now on.
    case playerGone(PlayerID)
    /// A hook claimed Now Playing for its app, named by `properties` as a stream's app would be
    /// (`application.process.id`, `application.name`); `player` is where remote commands for it go.
    /// Nothing is paused or ducked. The claim lasts until another app takes Now Playing, or until
    /// ``playerGone(_:)`` for `player` (the hook went away).
    case nowPlayingClaimed(StreamID, Properties, player: PlayerID?)
    /// The stream's monitor carries sound (`true`) or has been silent for a while (`false`). Streams count
    /// as audible when they start, until measured otherwise; the engine asks for measurements with
    /// ``Command/measure(_:_:)``.
    case audibility(StreamID, audible: Bool)
    /// The shell started measuring the stream: a verdict (``audibility(_:audible:)``) is on its way, and
    /// until it comes (or ``Audibility`` gives up waiting) the stream's grace does not run out on the
    /// assumption that it is audible.
    case measuring(StreamID)
    /// A capture stream appeared or changed, with what the server says of it: `properties` name the app as
    /// a stream's would; `monitor`: it records a sink's monitor (what plays) rather than an input; `corked`:
    /// its app holds it paused. The engine decides whether the app records from a microphone
    /// (``Capture/records(_:monitor:corked:)``: an uncorked capture of an input that is no peak meter):
    /// while it does, its playback is classified with the pseudo-property `recording = "yes"` (browser and
    /// Electron calls look like any other playback otherwise), and a rule that names `capture` may make the
    /// recording itself interrupt (apps that listen).
    case capture(StreamID, Properties, monitor: Bool = false, corked: Bool = false)
    /// The capture stream ended.
    case captureEnded(StreamID)
    /// The daemon stops cleanly: every duck ramps back over `fade` ms and every policy mute is undone
    /// (players it paused stay paused: resuming them behind the user's back, over a call perhaps, would
    /// be worse). From then on the engine follows what happens but changes no stream — a grace running
    /// out or a new stream must not duck or mute again what the stop is restoring — except that a stream
    /// ending while still changed gets its saved volume repaired.
    case stop(fade: Milliseconds)
    /// An output (a sink) is there, described so: it appeared, or its properties or active port changed
    /// (a port becoming unavailable or changing away from headphones is an output loss for the streams
    /// heard on it; the same device appearing again is a profile switch, or the device coming back).
    case output(OutputID, Output)
    /// An output went away (its device was unplugged, switched off or is switching profile). The server
    /// moves its streams elsewhere itself (``streamMoved(_:to:)``), before or after it says so.
    case outputRemoved(OutputID)
    /// A stream plays on `output` now: where it started (told right after ``streamStarted(_:_:player:playing:)``),
    /// or a move — the server's, off a sink that is going away, or the user's (pavucontrol, `pactl
    /// move-sink-input`, a new default sink), off a sink that stays. The engine tells them apart by
    /// whether the old output is removed (it is the server's rescue when the removal came first or
    /// comes within ``Engine/rescueLag``).
    case streamMoved(StreamID, to: OutputID)
    /// A window of `app` has focus (nil: no window has — the desktop, or the focused window closed). An
    /// app seen with a window whose windows are all unfocused is ducked or muted if its class or rule
    /// says `unfocused` (``UnfocusedAction``); apps never seen with a window never are.
    case focus(AppIdentity?)
    /// A window of `app` closed: if it had focus, nothing has focus now (the app lost it).
    case windowClosed(AppIdentity)
    /// The last window of `app` closed: the focus source knows no other window of its process (X11's
    /// `_NET_CLIENT_LIST`, sway's tree, KWin's and GNOME Shell's window lists). Focus takes it as
    /// ``windowClosed(_:)``; when `app` is the Now Playing app and its class or rule says
    /// `closed-window = "pause"` (``ClosedWindowAction``), its player is paused, as visionOS does.
    case lastWindowClosed(AppIdentity)
    /// The focus source went away (the display closed): focus is unknown, and what was ducked for it is
    /// restored until a source speaks again.
    case focusUnknown
    /// The sound server went away (its connection closed: it stopped, crashed or restarted); each of its
    /// streams and captures was ended just before. What ended is forgotten at once instead of lingering
    /// for its class's hold: nothing it did is heard any more, and a prompt that vanished with the old
    /// server must not duck the first music on the new one. Hooks' interruptions (begun over the control
    /// socket, not on the server) stay.
    case serverGone
    /// The policy was replaced (the daemon's `SIGHUP`, a fixture's `reload`): every stream is classified
    /// anew under it and the effects follow; recordings are matched against its capture rules again.
    case policyReplaced(Policy)
    /// Time passed: a deadline from ``Engine/nextDeadline`` was reached.
    case tick
}
