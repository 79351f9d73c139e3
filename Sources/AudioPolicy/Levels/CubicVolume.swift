import Glibc

/// PulseAudio's cubic software-volume scale, computed here rather than by libpulse, so that volumes
/// cost nothing of libpulse: the daemon in ALSA mode scales volumes the same way and never loads it.
///
/// These are the three formulas of libpulse's volume.c (`pa_sw_volume_from_linear`,
/// `pa_sw_volume_to_linear`, `pa_sw_volume_multiply`), equal to them bit for bit
/// (CubicVolumeTests compares them over every raw volume up to 300 % and random pairs).
enum CubicVolume {
    typealias Raw = ChannelVolumes.Raw

    /// The raw volume for `linear` amplitude: `round(∛linear · norm)`, clamped; 0 at or below 0.
    static func raw(linear: Double) -> Raw {
        guard linear > 0 else { return ChannelVolumes.silent }
        let raw = (cbrt(linear) * Double(ChannelVolumes.norm)).rounded(.toNearestOrAwayFromZero)
        return raw >= Double(ChannelVolumes.maximum) ? ChannelVolumes.maximum : Raw(raw)
    }

    /// The linear amplitude of `raw`: `(raw / norm)³`.
    static func linear(_ raw: Raw) -> Double {
        if raw == ChannelVolumes.silent { return 0 }
        if raw == ChannelVolumes.norm { return 1 }
        let fraction = Double(raw) / Double(ChannelVolumes.norm)
        return fraction * fraction * fraction
    }

    /// `a` scaled by `b` (the product of their amplitudes): `a · b / norm`, rounded, clamped; invalid
    /// (`Raw.max`) when either is above ``ChannelVolumes/maximum``.
    static func multiply(_ a: Raw, _ b: Raw) -> Raw {
        guard a <= ChannelVolumes.maximum, b <= ChannelVolumes.maximum else { return Raw.max }
        let norm = UInt64(ChannelVolumes.norm)
        let product = (UInt64(a) * UInt64(b) + norm / 2) / norm
        return Raw(min(product, UInt64(ChannelVolumes.maximum)))
    }
}
