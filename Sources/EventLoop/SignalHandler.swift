import CPulse
import Glibc
import Synchronization

extension MainLoop {
    /// Delivers process signals (SIGTERM, SIGINT, SIGHUP …) as ordinary
    /// callbacks on the loop, through libpulse's `pa_signal_*`.
    ///
    /// libpulse's signal support is process-wide: it catches the signal in an
    /// async-signal-safe handler that writes to a pipe the loop watches. So
    /// only one `SignalHandler` may exist at a time; creating a second one
    /// throws ``AlreadyInstalled``. Releasing the handler restores the
    /// signals' previous dispositions.
    public final class SignalHandler {
        /// Thrown when another `SignalHandler` is alive.
        public struct AlreadyInstalled: Error, CustomStringConvertible {
            public var description: String { "signal handling is already installed on a main loop" }
        }

        private final class Box {
            let handler: (Int32) -> Void

            init(handler: @escaping (Int32) -> Void) {
                self.handler = handler
            }
        }

        /// Guards libpulse's process-global signal state (pa_signal_init
        /// asserts that it runs once).
        private static let installed = Atomic<Bool>(false)

        private let loop: MainLoop
        private let box: Box
        private var events: [OpaquePointer] = []

        /// The signals this handler catches.
        public let signals: [Int32]

        /// Catches `signals` and calls `handler` on the loop for each one.
        public init(
            loop: MainLoop,
            signals: [Int32] = [SIGTERM, SIGINT, SIGHUP],
            handler: @escaping (_ signal: Int32) -> Void
        ) throws {
            guard Self.installed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
            else {
                throw AlreadyInstalled()
            }
            self.loop = loop
            self.signals = signals
            self.box = Box(handler: handler)
            guard pa_signal_init(loop.api) == 0 else {
                Self.installed.store(false, ordering: .releasing)
                fatalError("pa_signal_init failed: out of file descriptors?")
            }
            let userdata = Unmanaged.passUnretained(box).toOpaque()
            var unblock = sigset_t()
            sigemptyset(&unblock)
            for signal in signals {
                if let event = pa_signal_new(signal, Self.callback, userdata) {
                    events.append(event)
                }
                sigaddset(&unblock, signal)
            }
            // A process may start with these signals blocked (inherited from
            // a parent's thread, as test runners do): then they would never
            // arrive. The daemon has only the loop's thread.
            pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
        }

        deinit {
            // pa_signal_new pushes on the head of a list whose back links it doesn't keep, so
            // freeing from the tail corrupts it: free the newest first.
            for event in events.reversed() {
                pa_signal_free(event)
            }
            pa_signal_done()
            Self.installed.store(false, ordering: .releasing)
        }

        private static let callback: pa_signal_cb_t = { _, _, signal, userdata in
            guard let userdata else { return }
            let box = Unmanaged<Box>.fromOpaque(userdata).takeUnretainedValue()
            box.handler(signal)
        }
    }
}
