import AudioPolicy
import CPulse
import SoundBackend

/// Copied out of libpulse's info structure while its callback runs.
extension SinkInput {
    /// Copies what the daemon needs out of `info`, with the stream's own
    /// properties only (the connection merges the client's in).
    init(_ info: pa_sink_input_info) {
        self.init(
            index: info.index,
            clientIndex: info.client == invalidIndex ? nil : info.client,
            sinkIndex: info.sink,
            name: info.name.map { String(cString: $0) } ?? "",
            properties: PropertyList.dictionary(info.proplist),
            volume: ChannelVolumes(info.volume, channelMap: info.channel_map),
            muted: info.mute != 0,
            corked: info.corked != 0,
            hasVolume: info.has_volume != 0,
            volumeWritable: info.volume_writable != 0)
    }
}

extension SinkInput {
    /// Whether the volume reads as "not known yet": every channel at 0
    /// while not muted (how pipewire-pulse announces a new stream).
    var volumeLooksUnset: Bool {
        hasVolume && !muted && !volume.values.isEmpty && volume.values.allSatisfy { $0 == 0 }
    }
}

/// `PA_INVALID_INDEX`, which Swift does not import (it is a cast macro).
let invalidIndex = UInt32.max
