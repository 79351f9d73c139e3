import AudioPolicy
import CPulse
import FoundationEssentials
import Glibc
import PulseBackend
import SoundBackend

/// One generated playback stream on a libpulse context: silence or a tone, optionally created corked
/// and at a volume of its own.
///
/// Shared by the benchmark's ``StreamGenerator`` and the soak's apps (``SoakApp``), so that both load
/// the server the same way: the format the sink plays (no resampler per stream), half a second of
/// buffer refilled in quarters.
enum PlaybackStream {
    /// Half a second of buffer, refilled in quarters: few wake-ups for the generator and the server.
    static let bufferSeconds = 0.5
    static let refillSeconds = bufferSeconds / 4

    /// Creates the stream and connects it for playback; nil when libpulse refuses. `properties` go on
    /// the stream; `volume`, when given, is the stream's initial volume (a stream-restore entry does not
    /// override a volume the client set).
    static func open(on context: OpaquePointer, name: String, properties: [String: String], corked: Bool,
                     tone: Bool, sink: String? = nil, volume: ChannelVolumes? = nil) -> OpaquePointer? {
        var spec = pa_sample_spec(format: PA_SAMPLE_S16LE, rate: 48000, channels: 2)
        var flags = PA_STREAM_FIX_FORMAT.rawValue | PA_STREAM_FIX_RATE.rawValue | PA_STREAM_FIX_CHANNELS.rawValue
        if corked { flags |= PA_STREAM_START_CORKED.rawValue }
        let second = Double(pa_bytes_per_second(&spec))
        var buffer = pa_buffer_attr(maxlength: UInt32.max, tlength: UInt32(second * bufferSeconds),
                                    prebuf: UInt32.max, minreq: UInt32(second * refillSeconds),
                                    fragsize: UInt32.max)
        let proplist = PropertyList.make(properties)
        defer { pa_proplist_free(proplist) }
        guard let stream = pa_stream_new_with_proplist(context, name, &spec, nil, proplist) else { return nil }
        if tone {
            pa_stream_set_write_callback(stream, { stream, bytes, _ in PlaybackStream.write(stream, bytes, tone: true) }, nil)
        } else {
            pa_stream_set_write_callback(stream, { stream, bytes, _ in PlaybackStream.write(stream, bytes, tone: false) }, nil)
        }
        let connected: Int32
        if var cvolume = volume?.cVolume {
            connected = pa_stream_connect_playback(stream, sink, &buffer, pa_stream_flags_t(rawValue: flags), &cvolume, nil)
        } else {
            connected = pa_stream_connect_playback(stream, sink, &buffer, pa_stream_flags_t(rawValue: flags), nil, nil)
        }
        guard connected == 0 else {
            pa_stream_unref(stream)
            return nil
        }
        return stream
    }

    /// Writes what the server asked for: the tone in full (one block from its pool holds at most 64 KiB);
    /// silence one block a request, as in every earlier round of the benchmark. (Written in full, 200
    /// streams of silence kept PulseAudio's desktop-mode main thread so busy that a new `paplay` stalled;
    /// not yet understood, see docs/benchmarks.md.)
    private static func write(_ stream: OpaquePointer?, _ bytes: Int, tone: Bool) {
        guard let stream else { return }
        var remaining = bytes
        while remaining > 0 {
            var data: UnsafeMutableRawPointer?
            var size = remaining
            guard pa_stream_begin_write(stream, &data, &size) == 0, let data, size > 0 else { return }
            memset(data, 0, size)
            if tone { writeTone(stream, into: data, size: size) }
            pa_stream_write(stream, data, size, nil, 0, PA_SEEK_RELATIVE)
            remaining = tone ? remaining - size : 0
        }
    }

    /// A square wave at −12 dBFS, 55 frames per half period (436 Hz at 48 kHz), in whatever format the
    /// stream took from the sink (FIX_FORMAT): float or 16-bit.
    private static func writeTone(_ stream: OpaquePointer, into data: UnsafeMutableRawPointer, size: Int) {
        guard let spec = pa_stream_get_sample_spec(stream)?.pointee, spec.channels > 0 else { return }
        let channels = Int(spec.channels)
        switch spec.format {
        case PA_SAMPLE_FLOAT32LE:
            let samples = data.bindMemory(to: Float.self, capacity: size / 4)
            for index in 0..<(size / 4) { samples[index] = (index / channels / 55) % 2 == 0 ? 0.25 : -0.25 }
        case PA_SAMPLE_S16LE:
            let samples = data.bindMemory(to: Int16.self, capacity: size / 2)
            for index in 0..<(size / 2) { samples[index] = (index / channels / 55) % 2 == 0 ? 8192 : -8192 }
        default:
            break
        }
    }
}
