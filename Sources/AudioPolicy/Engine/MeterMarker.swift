/// How a peak meter's capture stream is told from an app's recording: ours carry a marker property,
/// mixers' (pavucontrol's, PipeWire's) their own names. A meter records what plays, never a microphone,
/// so no rule ever counts it as someone recording.
public enum MeterMarker {
    /// The property that marks the daemon's own meter streams.
    public static let key = "audio-policyd.meter"
    public static let value = "1"
    /// A meter stream's `media.name`: the name mixers give their peak streams.
    public static let streamName = "Peak detect"

    /// Whether a capture with `properties` is one of the daemon's own meters.
    public static func isOurs(_ properties: Properties) -> Bool { properties[key] == value }

    /// Whether a capture with `properties` is a peak meter, ours or a mixer's: PulseAudio reports no stream
    /// flags, so on PulseAudio only the name and our marker tell; pipewire-pulse says `stream.monitor`.
    public static func isMeter(_ properties: Properties) -> Bool {
        isOurs(properties) || properties["media.name"] == streamName || properties["stream.monitor"] == "true"
    }
}
