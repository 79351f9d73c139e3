import CPulse
import SoundBackend

/// Copied out of libpulse's info structure while its callback runs.
extension SourceOutput {
    /// Copies what the daemon needs out of `info`, with the stream's own
    /// properties only and no monitor facts yet (the connection adds the
    /// client's properties and the source's `monitor_of_sink`).
    init(_ info: pa_source_output_info) {
        self.init(
            index: info.index,
            clientIndex: info.client == invalidIndex ? nil : info.client,
            sourceIndex: info.source,
            properties: PropertyList.dictionary(info.proplist),
            corked: info.corked != 0,
            monitoredSink: nil)
    }
}
