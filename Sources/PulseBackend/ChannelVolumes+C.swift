import AudioPolicy
import CPulse
import SoundBackend

/// libpulse's `pa_cvolume` and `pa_channel_map`, to and from the backend-neutral per-channel volumes.
extension ChannelVolumes {
    /// Copies a `pa_cvolume` and, if given, its `pa_channel_map`.
    init(_ volume: pa_cvolume, channelMap map: pa_channel_map?) {
        var volume = volume
        let count = Int(min(UInt32(volume.channels), PA_CHANNELS_MAX))
        let values = withUnsafeBytes(of: &volume.values) { Array($0.bindMemory(to: UInt32.self).prefix(count)) }
        var positions: [Int32] = []
        if var map, map.channels > 0 {
            let mapCount = Int(min(UInt32(map.channels), PA_CHANNELS_MAX))
            positions = withUnsafeBytes(of: &map.map) {
                $0.bindMemory(to: pa_channel_position_t.self).prefix(mapCount).map { $0.rawValue }
            }
        }
        self.init(values: values, channelMap: positions)
    }

    /// The `pa_cvolume` for these values (at most `PA_CHANNELS_MAX` channels).
    public var cVolume: pa_cvolume {
        var volume = pa_cvolume()
        let count = min(values.count, Int(PA_CHANNELS_MAX))
        volume.channels = UInt8(count)
        withUnsafeMutableBytes(of: &volume.values) { raw in
            let slots = raw.bindMemory(to: UInt32.self)
            for i in 0..<count {
                slots[i] = values[i]
            }
        }
        return volume
    }

    /// The `pa_channel_map` for ``channelMap``; an empty (invalid) map when unknown.
    var cChannelMap: pa_channel_map {
        var map = pa_channel_map()
        let count = min(channelMap.count, Int(PA_CHANNELS_MAX))
        map.channels = UInt8(count)
        withUnsafeMutableBytes(of: &map.map) { raw in
            let slots = raw.bindMemory(to: pa_channel_position_t.self)
            for i in 0..<count {
                slots[i] = pa_channel_position_t(rawValue: channelMap[i])
            }
        }
        return map
    }
}
