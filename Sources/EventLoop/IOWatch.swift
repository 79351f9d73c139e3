import CPulse

extension MainLoop {
    /// Calls back on the loop when a file descriptor becomes readable or
    /// writable (or hangs up, or fails).
    ///
    /// The watch does not own the descriptor: close it only after the watch
    /// is gone. Set ``events`` to an empty set to pause a watch without
    /// losing it.
    public final class IOWatch {
        /// Conditions a watch waits for or reports.
        public struct Events: OptionSet, Sendable {
            public let rawValue: UInt32

            public init(rawValue: UInt32) {
                self.rawValue = rawValue
            }

            public static let readable = Events(rawValue: PA_IO_EVENT_INPUT.rawValue)
            public static let writable = Events(rawValue: PA_IO_EVENT_OUTPUT.rawValue)
            /// The peer hung up. Always reported, never needs asking for.
            public static let hangup = Events(rawValue: PA_IO_EVENT_HANGUP.rawValue)
            /// An error on the descriptor. Always reported, never needs asking for.
            public static let error = Events(rawValue: PA_IO_EVENT_ERROR.rawValue)
        }

        private final class Box {
            let handler: (Events) -> Void

            init(handler: @escaping (Events) -> Void) {
                self.handler = handler
            }
        }

        private let loop: MainLoop
        private let box: Box
        private let event: OpaquePointer

        /// The watched descriptor.
        public let fd: Int32

        /// What the watch waits for; setting it takes effect at once.
        public var events: Events {
            didSet {
                guard events != oldValue else { return }
                loop.api.pointee.io_enable(event, pa_io_event_flags_t(rawValue: events.rawValue))
            }
        }

        /// Watches `fd` for `events`, calling `handler` with what happened.
        public init(loop: MainLoop, fd: Int32, events: Events, handler: @escaping (Events) -> Void) {
            self.loop = loop
            self.fd = fd
            self.events = events
            self.box = Box(handler: handler)
            guard
                let event = loop.api.pointee.io_new(
                    loop.api, fd, pa_io_event_flags_t(rawValue: events.rawValue), Self.callback,
                    Unmanaged.passUnretained(box).toOpaque())
            else {
                fatalError("pa_mainloop_api.io_new returned NULL")
            }
            self.event = event
        }

        deinit {
            loop.api.pointee.io_free(event)
        }

        private static let callback: pa_io_event_cb_t = { _, _, _, flags, userdata in
            guard let userdata else { return }
            let box = Unmanaged<Box>.fromOpaque(userdata).takeUnretainedValue()
            box.handler(Events(rawValue: flags.rawValue))
        }
    }
}
