/// What a sound backend tells the daemon, one case per kind of news, in the order it happened.
///
/// Both backends (``PulseConnection`` for PulseAudio and pipewire-pulse, the ALSA plugins' server) deliver
/// through the one ``StreamServer/onNews`` closure, so a listener is one `switch` that the compiler checks
/// for completeness, and a wrapper (`bench`'s timer, a test's recorder) sees every kind of news in one place.
///
/// Order on every connection: `.state(.ready)`, then `.initialStreams` and `.initialCaptures` (each once),
/// the sinks as `.sinkAdded`, then changes as they come.
public enum ServerNews {
    /// The connection's state changed.
    case state(ConnectionState)
    /// Every playback stream that existed when tracking began; once per connection.
    case initialStreams([SinkInput])
    /// A playback stream appeared (its client is known).
    case streamAdded(SinkInput)
    /// A known playback stream changed in a way a snapshot shows (volume, mute, cork, sink, properties).
    case streamChanged(SinkInput)
    /// A playback stream went away, by index.
    case streamRemoved(UInt32)
    /// Every capture stream that existed when tracking began; once per connection, right after the streams.
    case initialCaptures([SourceOutput])
    /// A capture stream appeared (its client and source are known).
    case captureAdded(SourceOutput)
    /// A known capture stream changed (corked, moved, properties).
    case captureChanged(SourceOutput)
    /// A capture stream went away, by index.
    case captureRemoved(UInt32)
    /// An output appeared: each one listed after connecting, then each new one.
    case sinkAdded(Sink)
    /// A known output changed (its active port, a port's availability).
    case sinkChanged(Sink)
    /// An output went away, by index, as soon as the server says so.
    case sinkRemoved(UInt32)
    /// A request failed; the description says which and why.
    case error(String)
}
