import CPulse
import SoundBackend

/// What one libpulse request's callbacks need, kept alive exactly as long as
/// the request's `pa_operation`.
///
/// ``start(_:)`` passes the request to libpulse *retained*, and the
/// operation's state callback takes it back exactly once, when the operation
/// ends: done (after the last reply callback) or cancelled (the context went
/// away before the reply, and no reply callback will run). Reply callbacks
/// only borrow it with ``borrow(_:)``. Subclasses hold a weak reference to
/// their connection, never the connection itself.
class PulseRequest {
    /// Starts the operation that `make` creates with this request as its
    /// userdata, and drops our reference to the operation.
    ///
    /// Returns `false`, and keeps nothing, when libpulse refused to start it
    /// (`make` returned NULL: context not ready, invalid argument).
    final func start(_ make: (UnsafeMutableRawPointer) -> OpaquePointer?) -> Bool {
        let userdata = Unmanaged.passRetained(self).toOpaque()
        guard let operation = make(userdata) else {
            Unmanaged<PulseRequest>.fromOpaque(userdata).release()
            return false
        }
        pa_operation_set_state_callback(operation, Self.operationEnded, userdata)
        pa_operation_unref(operation)
        return true
    }

    /// The request behind a reply callback's `userdata`, borrowed.
    static func borrow<Request: PulseRequest>(_ userdata: UnsafeMutableRawPointer?) -> Request? {
        guard let userdata else { return nil }
        return Unmanaged<PulseRequest>.fromOpaque(userdata).takeUnretainedValue() as? Request
    }

    /// Called once when the operation ends, after its last reply callback;
    /// `cancelled` when no reply came (the context failed or went away).
    func ended(cancelled: Bool) {}

    private static let operationEnded: pa_operation_notify_cb_t = { operation, userdata in
        guard let operation, let userdata else { return }
        switch pa_operation_get_state(operation) {
        case PA_OPERATION_DONE, PA_OPERATION_CANCELLED:
            let request = Unmanaged<PulseRequest>.fromOpaque(userdata).takeRetainedValue()
            request.ended(cancelled: pa_operation_get_state(operation) == PA_OPERATION_CANCELLED)
        default:
            break
        }
    }
}

/// A request that only reports failure: volume and mute writes, subscribe,
/// stream-restore writes.
final class AcknowledgedRequest: PulseRequest {
    weak var connection: PulseConnection?
    /// What was asked, for the error message ("set volume of sink input 12").
    let action: String
    /// A write to a stream that may end at any moment: "no such entity" only means it ended first
    /// (its REMOVE event follows), which is no failure.
    let toleratesVanishedStream: Bool

    /// Told once, when the request ends, whether the server took it (false: it refused, or the
    /// connection went before it answered).
    var onEnd: ((Bool) -> Void)?
    private var succeeded = false
    /// Its number among the requests a drain waits for (``PendingAnswers``).
    private let number: UInt64

    init(connection: PulseConnection, action: String, toleratesVanishedStream: Bool = false) {
        self.connection = connection
        self.action = action
        self.toleratesVanishedStream = toleratesVanishedStream
        number = connection.pendingAnswers.sent()
    }

    /// Ended, or never started: either way nothing more is coming for it.
    deinit {
        connection?.requestEnded(number)
    }

    override func ended(cancelled: Bool) {
        let onEnd = self.onEnd
        self.onEnd = nil
        onEnd?(succeeded && !cancelled)
    }

    static let callback: pa_context_success_cb_t = { context, success, userdata in
        if success != 0, let request: AcknowledgedRequest = borrow(userdata) { request.succeeded = true }
        guard success == 0, let request: AcknowledgedRequest = borrow(userdata) else { return }
        if request.toleratesVanishedStream, let context,
           pa_context_errno(context) == Int32(PA_ERR_NOENTITY.rawValue) { return }
        request.connection?.reportFailure(of: request.action, context: context)
    }
}
