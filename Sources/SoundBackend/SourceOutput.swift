import AudioPolicy

/// A snapshot of one capture stream (a PulseAudio source output): an app
/// recording a microphone, a screen recorder taking a sink's monitor, a
/// mixer's peak meter. Copied out of `pa_source_output_info` while its
/// callback ran.
///
/// ``properties`` merges the stream's property list with its client's,
/// exactly as ``SinkInput/properties`` does.
public struct SourceOutput: Equatable, Sendable {
    /// The source output's index, unique for the server's lifetime.
    public var index: UInt32
    /// The owning client's index; `nil` for streams that modules created.
    public var clientIndex: UInt32?
    /// The index of the source it records from.
    public var sourceIndex: UInt32
    /// The stream's properties merged with its client's.
    public var properties: [String: String]
    /// Whether the stream is paused (corked) by its own application.
    public var corked: Bool
    /// The sink whose monitor the source is (`pa_source_info.monitor_of_sink`);
    /// `nil` when the source is a real input (a microphone, a null source).
    public var monitoredSink: UInt32?

    /// Whether the stream records what a sink plays (its monitor source),
    /// rather than an input.
    public var isMonitor: Bool { monitoredSink != nil }

    /// Whether this is one of our own meters (``StreamMeter``, marked with ``MeterMarker``).
    public var isOwnMeter: Bool { MeterMarker.isOurs(properties) }

    /// Whether the stream only measures levels: one of our meters, a mixer's
    /// "Peak detect" stream (pavucontrol, pavucontrol-qt and GNOME's volume
    /// control name theirs so), or a stream pipewire-pulse marks as a peak
    /// monitor (`stream.monitor`, which it sets for `PA_STREAM_PEAK_DETECT`).
    ///
    /// PulseAudio reports no stream flags in `pa_source_output_info`, so on
    /// PulseAudio only the name and our marker tell.
    public var isPeakDetect: Bool {
        MeterMarker.isMeter(properties)
    }

    // MARK: - Well-known properties

    /// `media.role` (`phone`, `production`… or PipeWire's `Communication`…).
    public var role: String? { properties["media.role"] }
    /// `application.name`.
    public var applicationName: String? { properties["application.name"] }
    /// `application.process.id`, as the app reported it.
    public var processID: Int32? { properties["application.process.id"].flatMap { Int32($0) } }

    public init(
        index: UInt32, clientIndex: UInt32?, sourceIndex: UInt32, properties: [String: String],
        corked: Bool, monitoredSink: UInt32?
    ) {
        self.index = index
        self.clientIndex = clientIndex
        self.sourceIndex = sourceIndex
        self.properties = properties
        self.corked = corked
        self.monitoredSink = monitoredSink
    }
}
