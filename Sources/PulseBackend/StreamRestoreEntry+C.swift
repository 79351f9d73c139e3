import AudioPolicy
import CPulse
import SoundBackend

/// Copied out of libpulse's info structure while its callback runs.
extension StreamRestoreEntry {
    /// Copies `info`; an entry without a name is not an entry.
    init?(_ info: pa_ext_stream_restore_info) {
        guard let name = info.name else { return nil }
        self.init(
            name: String(cString: name),
            volume: info.volume.channels > 0
                ? ChannelVolumes(info.volume, channelMap: info.channel_map) : nil,
            muted: info.mute != 0,
            device: info.device.map { String(cString: $0) })
    }
}
