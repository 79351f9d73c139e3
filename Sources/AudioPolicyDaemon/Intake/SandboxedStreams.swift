import AudioPolicy
import PulseBackend
import SessionBus
import SoundBackend

/// The sandboxed apps' streams, told apart by their real identity before anything else reads them.
///
/// A Flatpak app's stream carries the pid inside its sandbox (often 2): as a host pid it would name
/// another process, count every sandboxed app as one app, and never reach the app's player. So each
/// stream's process is looked up once (``Sandbox/identify(pid:binary:)``) and its properties say
/// what was found, in the keys the policy and player matching already read: `application.process.id`
/// becomes the host pid (or goes, when no single host process fits), the sandbox's pid moves to
/// `application.process.sandbox_id`, and the app id is put in `pipewire.access.portal.app_id` (the key
/// pipewire-pulse fills), so one rule matches the app on both servers. Touched only on the loop's thread.
struct SandboxedStreams {
    /// The key the sandbox's own pid is kept under.
    static let sandboxPIDKey = "application.process.sandbox_id"
    static let appIDKey = "pipewire.access.portal.app_id"

    /// What each live stream's process turned out to be, by sink input.
    private var known: [UInt32: Sandbox.Identity] = [:]
    /// Looks a process up (replaced in tests).
    private let identify: (Int32, String?) -> Sandbox.Identity

    init(identify: @escaping (Int32, String?) -> Sandbox.Identity = Sandbox.identify(pid:binary:)) {
        self.identify = identify
    }

    /// `input` with its real identity in its properties (the lookup is made on its first sight only);
    /// `found` hears of a sandbox the first time (for the log).
    mutating func identified(_ input: SinkInput, found: (Sandbox.Identity) -> Void = { _ in }) -> SinkInput {
        guard let pid = input.processID.flatMap({ Int32(exactly: $0) }), pid > 0 else { return input }
        let identity: Sandbox.Identity
        if let seen = known[input.index] {
            identity = seen
        } else {
            identity = identify(pid, input.properties["application.process.binary"])
            known[input.index] = identity
            if identity.sandboxPID != nil { found(identity) }
        }
        var input = input
        input.properties = Self.apply(identity, to: input.properties)
        return input
    }

    /// The stream ended: its identity is forgotten (the server may reuse nothing, but the table stays small).
    mutating func forget(_ index: UInt32) {
        known[index] = nil
    }

    /// Properties rewritten for an identity: pure, for the unit tests.
    static func apply(_ identity: Sandbox.Identity, to properties: Properties) -> Properties {
        var properties = properties
        if let sandboxPID = identity.sandboxPID {
            properties[sandboxPIDKey] = String(sandboxPID)
            properties["application.process.id"] = identity.hostPID.map(String.init)
        }
        if let appID = identity.appID, properties[appIDKey]?.isEmpty ?? true {
            properties[appIDKey] = appID
        }
        return properties
    }
}
