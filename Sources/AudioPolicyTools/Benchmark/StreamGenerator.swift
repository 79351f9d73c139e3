import CPulse
import EventLoop
import FoundationEssentials
import Glibc
import PulseBackend
import SoundBackend

/// The benchmark's "other streams": `count` playback streams from one client connection (PulseAudio
/// takes at most 64 clients; pipewire-pulse has no server-side generator), playing silence, or held
/// corked as a paused player holds its stream. Runs until the process is killed.
///
/// The streams are started one by one across one refill period, so that, as real streams started at
/// different moments, they ask the server for more at different moments: started together, all of
/// them would refill in the same instant, a burst no desktop sees.
public final class StreamGenerator {
    private let loop = MainLoop()
    private let count: Int
    private let corked: Bool
    private let tone: Bool
    private let properties: [String: String]
    private let sinks: [String]
    private var context: OpaquePointer?
    private var streams: [OpaquePointer] = []
    private var starter: MainLoop.Timer?

    /// `properties` go on every stream (and the client). The streams go to `sinks` in turn (the
    /// server's default sink when empty).
    /// With `tone`, the streams play a square wave near 440 Hz instead of silence: music that a meter
    /// hears as sound.
    public init(count: Int, corked: Bool, tone: Bool = false, properties: [String: String], sinks: [String] = []) {
        self.count = count
        self.corked = corked
        self.tone = tone
        self.properties = properties
        self.sinks = sinks
    }

    /// Connects (to `PULSE_SERVER` or the session's server) and plays until killed. Returns 1 when the
    /// server cannot be reached or refuses a stream.
    public func run() -> Int32 {
        let proplist = PropertyList.make(properties)
        context = pa_context_new_with_proplist(loop.api, "audio-policyd bench streams", proplist)
        pa_proplist_free(proplist)
        guard let context else { return 1 }
        pa_context_set_state_callback(context, { _, userdata in
            guard let userdata else { return }
            Unmanaged<StreamGenerator>.fromOpaque(userdata).takeUnretainedValue().contextChanged()
        }, Unmanaged.passUnretained(self).toOpaque())
        guard pa_context_connect(context, nil, PA_CONTEXT_NOAUTOSPAWN, nil) >= 0 else { return 1 }
        return loop.run()
    }

    private func contextChanged() {
        guard let context else { return }
        switch pa_context_get_state(context) {
        case PA_CONTEXT_READY:
            startStreams(on: context)
        case PA_CONTEXT_FAILED, PA_CONTEXT_TERMINATED:
            loop.quit(1)
        default:
            break
        }
    }

    private func startStreams(on context: OpaquePointer) {
        guard count > 0 else { return }
        let interval = UInt64(PlaybackStream.refillSeconds * 1_000_000) / UInt64(count)
        starter = MainLoop.Timer(loop: loop) { [unowned self] in
            guard startStream(number: streams.count, on: context) else { return loop.quit(1) }
            // A one-shot timer: not scheduled again, it stays quiet (not freed here, inside its own call).
            if streams.count < count { starter?.schedule(after: interval) }
        }
        starter?.schedule(after: 0)
    }

    private func startStream(number: Int, on context: OpaquePointer) -> Bool {
        let sink: String? = sinks.isEmpty ? nil : sinks[number % sinks.count]
        guard let stream = PlaybackStream.open(on: context, name: "bench stream \(number)", properties: properties,
                                               corked: corked, tone: tone, sink: sink)
        else { return false }
        streams.append(stream)
        return true
    }
}
