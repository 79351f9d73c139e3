import AudioPolicy
import CPulse
import SoundBackend

// The server's stream-restore database, through the ext-stream-restore
// protocol extension (PulseAudio's module-stream-restore; pipewire-pulse
// implements the same extension on top of WirePlumber's restore-stream).
extension PulseConnection {
    /// Reads every saved entry; `nil` (and ``onError``) if the read failed.
    public func readSavedEntries(completion: @escaping ([StreamRestoreEntry]?) -> Void) {
        guard let context, contextIsReady else {
            onNews(.error("read stream-restore entries: not connected"))
            completion(nil)
            return
        }
        let request = StreamRestoreReadRequest(connection: self, completion: completion)
        if !request.start({ pa_ext_stream_restore_read(context, StreamRestoreReadRequest.callback, $0) }) {
            reportFailure(of: "read stream-restore entries", context: context)
            completion(nil)
        }
    }

    /// Reads the saved entry called `name` (a stream's
    /// `module-stream-restore.id`); `nil` when there is none or the read failed.
    ///
    /// The extension can only read the whole database; the database holds a
    /// few dozen entries.
    public func readSavedEntry(name: String, completion: @escaping (StreamRestoreEntry?) -> Void) {
        readSavedEntries { entries in
            completion(entries?.first { $0.name == name })
        }
    }

    /// Saves `volume` and `muted` as the entry `name`, replacing that entry
    /// only (`PA_UPDATE_REPLACE`) and changing no stream that is playing
    /// now (apply_immediately 0).
    ///
    /// Pass the `device` and channel map of the entry read back with
    /// ``readSavedEntry(name:completion:)`` to keep them. Volumes without a
    /// channel map for their channel count get libpulse's default map.
    public func writeSavedEntry(name: String, volume: ChannelVolumes, muted: Bool, device: String?,
                                completion: ((Bool) -> Void)? = nil) {
        writeSavedEntry(StreamRestoreEntry(name: name, volume: volume, muted: muted, device: device), completion: completion)
    }

    /// Saves `entry`, replacing the entry of the same name only.
    ///
    /// On pipewire-pulse the write goes to PipeWire's "route-settings"
    /// metadata, from which WirePlumber copies it into its restore-stream
    /// state — but only when the metadata value *changes*. WirePlumber saves
    /// stream volumes to its state without updating the metadata, so a
    /// repair identical to an earlier write would be ignored and the duck
    /// would stay saved. So there the entry is first written with the mute
    /// flag flipped, then as asked: two changes, the second one wins.
    ///
    /// `completion` is told whether the server took the (last) write: a repair is done only then.
    public func writeSavedEntry(_ entry: StreamRestoreEntry, completion: ((Bool) -> Void)? = nil) {
        if tracker.serverIsPipeWire {
            var different = entry
            different.muted.toggle()
            sendSavedEntry(different)
        }
        sendSavedEntry(entry, completion: completion)
    }

    private func sendSavedEntry(_ entry: StreamRestoreEntry, completion: ((Bool) -> Void)? = nil) {
        let action = "write stream-restore entry \(entry.name)"
        guard let context, contextIsReady else {
            onNews(.error("\(action): not connected"))
            completion?(false)
            return
        }
        var info = pa_ext_stream_restore_info()
        if let volume = entry.volume {
            info.volume = volume.cVolume
            info.channel_map = volume.cChannelMap
            if Int(info.channel_map.channels) != volume.channels {
                pa_channel_map_init_auto(&info.channel_map, UInt32(volume.channels), PA_CHANNEL_MAP_DEFAULT)
            }
        }
        info.mute = entry.muted ? 1 : 0
        let request = AcknowledgedRequest(connection: self, action: action)
        request.onEnd = completion
        let started = entry.name.withCString { name in
            withOptionalCString(entry.device) { device in
                info.name = name
                info.device = device
                return request.start { userdata in
                    pa_ext_stream_restore_write(
                        context, PA_UPDATE_REPLACE, &info, 1, 0, AcknowledgedRequest.callback, userdata)
                }
            }
        }
        if !started {
            request.onEnd = nil
            reportFailure(of: action, context: context)
            completion?(false)
        }
    }
}

/// Runs `body` with `string` as a C string, or NULL.
private func withOptionalCString<Result>(
    _ string: String?, _ body: (UnsafePointer<CChar>?) -> Result
) -> Result {
    guard let string else { return body(nil) }
    return string.withCString { body($0) }
}

/// `pa_ext_stream_restore_read`: collects the entries, then completes once.
private final class StreamRestoreReadRequest: PulseRequest {
    weak var connection: PulseConnection?
    let completion: ([StreamRestoreEntry]?) -> Void
    var entries: [StreamRestoreEntry] = []

    init(connection: PulseConnection, completion: @escaping ([StreamRestoreEntry]?) -> Void) {
        self.connection = connection
        self.completion = completion
    }

    static let callback: pa_ext_stream_restore_read_cb_t = { context, info, eol, userdata in
        guard let request: StreamRestoreReadRequest = borrow(userdata) else { return }
        if eol == 0, let info {
            if let entry = StreamRestoreEntry(info.pointee) { request.entries.append(entry) }
        } else if eol > 0 {
            request.completion(request.entries)
        } else {
            request.connection?.reportFailure(of: "read stream-restore entries", context: context)
            request.completion(nil)
        }
    }
}
