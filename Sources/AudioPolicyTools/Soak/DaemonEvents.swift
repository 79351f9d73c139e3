import AudioPolicyDaemon
import ControlProtocol
import EventLoop
import FoundationEssentials
import Glibc

/// A subscription to the daemon's events (streams, decisions) on the soak's loop: each batch of event
/// lines wakes the soak to look again, so a checkpoint waits on what the daemon does rather than on a
/// clock. The lines themselves are not parsed: the daemon's `status` is what is compared.
final class DaemonEvents {
    private let client: ControlClient
    private var watch: MainLoop.IOWatch?

    /// Subscribes on `socketPath`; `onEvent` runs on the loop after each batch.
    init(loop: MainLoop, socketPath: String, onEvent: @escaping () -> Void) throws {
        client = try ControlClient(path: socketPath)
        _ = try client.request(ControlRequest(id: .number(1), op: .subscribe, events: [.stream, .decision]))
        let fd = client.descriptor
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        watch = MainLoop.IOWatch(loop: loop, fd: fd, events: .readable) { [unowned self] events in
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            let count = recv(fd, &chunk, chunk.count, 0)
            if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) || events.contains(.hangup) {
                // The daemon went away; whoever restarts it subscribes again.
                watch = nil
            }
            onEvent()
        }
    }

    var isOpen: Bool { watch != nil }
}
