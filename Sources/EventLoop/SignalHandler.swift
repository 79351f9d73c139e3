import CMainLoop
import Glibc

extension MainLoop {
    /// Delivers process signals (SIGTERM, SIGINT, SIGHUP …) as ordinary
    /// callbacks on the loop.
    ///
    /// Signal handling is process-wide: an async-signal-safe handler writes
    /// each signal's number to a pipe the loop watches (CMainLoop's
    /// `apd_signals_*`). So only one `SignalHandler` may exist at a time;
    /// creating a second one throws ``AlreadyInstalled``. Releasing the
    /// handler restores the signals' previous dispositions.
    public final class SignalHandler {
        /// Thrown when another `SignalHandler` is alive.
        public struct AlreadyInstalled: Error, CustomStringConvertible {
            public var description: String { "signal handling is already installed on a main loop" }
        }

        private var watch: IOWatch?

        /// The signals this handler catches.
        public let signals: [Int32]

        /// Catches `signals` and calls `handler` on the loop for each one.
        public init(
            loop: MainLoop,
            signals: [Int32] = [SIGTERM, SIGINT, SIGHUP],
            handler: @escaping (_ signal: Int32) -> Void
        ) throws {
            let fd = signals.withUnsafeBufferPointer { apd_signals_install($0.baseAddress, Int32($0.count)) }
            // Thrown before `signals` is set: an object not fully made runs no deinit, which would
            // uninstall the handler that is there.
            guard fd >= 0 else {
                if errno == EBUSY { throw AlreadyInstalled() }
                fatalError("apd_signals_install failed: out of file descriptors?")
            }
            self.signals = signals
            watch = IOWatch(loop: loop, fd: fd, events: .readable) { _ in
                while case let signal = apd_signals_next(), signal != 0 { handler(signal) }
            }
        }

        deinit {
            watch = nil
            apd_signals_uninstall()
        }
    }
}
