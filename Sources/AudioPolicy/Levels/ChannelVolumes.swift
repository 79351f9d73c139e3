/// Per-channel volumes of a stream, in PulseAudio's raw `pa_volume_t` units,
/// with the channel map needed to write them back.
///
/// PulseAudio's software volume scale is cubic: `norm` (0x10000) is 100 %
/// and 0 dB, and a raw value `v` stands for the linear amplitude
/// `(v / norm)³`. Everything here that says "linear" means that amplitude
/// factor, the way `pa_sw_volume_from_linear`/`pa_sw_volume_to_linear` do (``CubicVolume``).
///
/// `==` is exact. Volumes that went through the server can come back one raw
/// unit off (pipewire-pulse converts to floats and back), so compare those
/// with ``matches(_:tolerance:)``.
public struct ChannelVolumes: Hashable, Sendable, CustomStringConvertible {
    /// A raw channel volume (`pa_volume_t`).
    public typealias Raw = UInt32

    /// 100 %, 0 dB (`PA_VOLUME_NORM`).
    public static let norm: Raw = 0x10000
    /// Silence (`PA_VOLUME_MUTED`).
    public static let silent: Raw = 0
    /// The largest valid volume (`PA_VOLUME_MAX`).
    public static let maximum: Raw = Raw.max / 2

    /// One raw volume per channel.
    public var values: [Raw]

    /// The channel positions (`pa_channel_position_t` raw values), one per
    /// channel; empty when unknown. Stream-restore entries need it.
    public var channelMap: [Int32]

    /// Volumes `values` with the channel map `channelMap` (may be empty).
    public init(values: [Raw], channelMap: [Int32] = []) {
        self.values = values
        self.channelMap = channelMap
    }

    /// The same raw `volume` on `channels` channels.
    public init(uniform volume: Raw, channels: Int, channelMap: [Int32] = []) {
        self.init(values: Array(repeating: volume, count: channels), channelMap: channelMap)
    }

    /// The raw volume that gives `linear` amplitude, on every one of `channels` channels.
    public init(linear: Double, channels: Int, channelMap: [Int32] = []) {
        self.init(uniform: CubicVolume.raw(linear: linear), channels: channels, channelMap: channelMap)
    }

    /// Number of channels.
    public var channels: Int { values.count }

    // MARK: - Linear amplitude

    /// Each channel's linear amplitude factor (1.0 at `norm`).
    public var linearValues: [Double] {
        values.map(CubicVolume.linear)
    }

    /// The mean of the channels' linear amplitude factors; 0 with no channels.
    public var averageLinear: Double {
        guard !values.isEmpty else { return 0 }
        return linearValues.reduce(0, +) / Double(values.count)
    }

    /// The volume a gain of `factor` gives when these are a stream's own level: these themselves at 1
    /// (exactly, with no rounding through ``scaled(by:)``), else scaled. What every backend writes for a
    /// gain (`StreamServer.setGain`) and the daemon expects back.
    public func atGain(_ factor: Double) -> ChannelVolumes {
        factor == 1 ? self : scaled(by: factor)
    }

    /// These volumes with each channel's amplitude multiplied by `factor`
    /// (0.2 is about −14 dB), keeping the balance between channels.
    ///
    /// Composes as `pa_sw_volume_multiply(v, pa_sw_volume_from_linear(factor))`,
    /// so scaling by a and then by b equals scaling by a·b (to a raw unit).
    public func scaled(by factor: Double) -> ChannelVolumes {
        let multiplier = CubicVolume.raw(linear: max(0, factor))
        var scaled = self
        scaled.values = values.map { min(CubicVolume.multiply($0, multiplier), Self.maximum) }
        return scaled
    }

    // MARK: - Comparison

    /// Whether both have the same channel count and every channel is within
    /// `tolerance` raw units.
    public func matches(_ other: ChannelVolumes, tolerance: Raw = 1) -> Bool {
        guard values.count == other.values.count else { return false }
        return zip(values, other.values).allSatisfy { a, b in
            (a > b ? a - b : b - a) <= tolerance
        }
    }

    public var description: String {
        values.map { "\((UInt64($0) * 100 + UInt64(Self.norm / 2)) / UInt64(Self.norm))%" }.joined(separator: " ")
    }
}
