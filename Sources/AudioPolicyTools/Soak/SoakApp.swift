import AudioPolicy
import CPulse
import EventLoop
import PulseBackend
import SoundBackend

/// One app of the soak: a libpulse client of its own with one playback stream, known to the daemon
/// by a process id of its own (`application.process.id`; no such process exists), so that it
/// interrupts, or is interrupted by, the soak's other apps as a separate program would be.
///
/// A client of its own so that it can quit as a real app does: gracefully (the stream closed, then
/// the connection) or abruptly (the connection dropped with the stream still playing, as when the app
/// is killed: the server sees the same closed socket).
final class SoakApp {
    let number: Int
    let kind: SoakStreamKind
    /// The volume it asks for when it connects its stream; nil: none, the server chooses (restoring
    /// its key's saved level), as most apps leave it.
    let volume: ChannelVolumes?
    let startedCorked: Bool
    /// When it means to quit (monotonic µs).
    let endsAt: UInt64
    /// The sink input, once the server has created it.
    private(set) var index: UInt32?
    private(set) var isCorked: Bool
    /// Told once when the app has gone without being asked to (the server went away, or refused it).
    var onLost: (SoakApp) -> Void = { _ in }

    private let loop: MainLoop
    private let properties: [String: String]
    private var context: OpaquePointer?
    private var stream: OpaquePointer?

    init(loop: MainLoop, number: Int, kind: SoakStreamKind, pid: Int, volume: ChannelVolumes?, corked: Bool,
         endsAt: UInt64) {
        self.loop = loop
        self.number = number
        self.kind = kind
        self.volume = volume
        self.startedCorked = corked
        self.isCorked = corked
        self.endsAt = endsAt
        var properties = kind.properties(number: number)
        properties["application.process.id"] = String(pid)
        self.properties = properties
    }

    deinit {
        close(abruptly: true)
    }

    /// Connects; the stream follows once the connection is ready. False when libpulse refuses at once.
    func start() -> Bool {
        let proplist = PropertyList.make(properties)
        defer { pa_proplist_free(proplist) }
        guard let context = pa_context_new_with_proplist(loop.api, properties["application.name"], proplist) else {
            return false
        }
        self.context = context
        pa_context_set_state_callback(context, { context, userdata in
            guard let userdata else { return }
            Unmanaged<SoakApp>.fromOpaque(userdata).takeUnretainedValue().contextChanged()
        }, Unmanaged.passUnretained(self).toOpaque())
        guard pa_context_connect(context, nil, PA_CONTEXT_NOAUTOSPAWN, nil) >= 0 else {
            close(abruptly: true)
            return false
        }
        return true
    }

    /// Starts playing a stream created corked (as a player resuming).
    func uncork() {
        guard isCorked, let stream, pa_stream_get_state(stream) == PA_STREAM_READY else { return }
        isCorked = false
        if let operation = pa_stream_cork(stream, 0, nil, nil) { pa_operation_unref(operation) }
    }

    /// Quits: gracefully closes the stream and then the connection, or abruptly drops the connection
    /// with the stream still playing.
    func quit(abruptly: Bool) {
        close(abruptly: abruptly)
    }

    private func close(abruptly: Bool) {
        if let stream {
            pa_stream_set_state_callback(stream, nil, nil)
            pa_stream_set_write_callback(stream, nil, nil)
            if !abruptly, pa_stream_get_state(stream) == PA_STREAM_READY { pa_stream_disconnect(stream) }
            pa_stream_unref(stream)
            self.stream = nil
        }
        if let context {
            pa_context_set_state_callback(context, nil, nil)
            pa_context_disconnect(context)
            pa_context_unref(context)
            self.context = nil
        }
    }

    private func contextChanged() {
        guard let context else { return }
        switch pa_context_get_state(context) {
        case PA_CONTEXT_READY:
            openStream(on: context)
        case PA_CONTEXT_FAILED, PA_CONTEXT_TERMINATED:
            lost()
        default:
            break
        }
    }

    private func openStream(on context: OpaquePointer) {
        guard stream == nil else { return }
        guard let stream = PlaybackStream.open(on: context, name: "soak \(kind.rawValue) \(number)",
                                               properties: properties, corked: startedCorked, tone: true,
                                               volume: volume)
        else { return lost() }
        self.stream = stream
        pa_stream_set_state_callback(stream, { stream, userdata in
            guard let userdata else { return }
            Unmanaged<SoakApp>.fromOpaque(userdata).takeUnretainedValue().streamChanged()
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    private func streamChanged() {
        guard let stream else { return }
        switch pa_stream_get_state(stream) {
        case PA_STREAM_READY:
            index = pa_stream_get_index(stream)
        case PA_STREAM_FAILED, PA_STREAM_TERMINATED:
            lost()
        default:
            break
        }
    }

    private func lost() {
        close(abruptly: true)
        onLost(self)
    }
}
