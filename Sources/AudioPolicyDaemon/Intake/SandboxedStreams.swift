import AudioPolicy
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
/// pipewire-pulse fills), so one rule matches the app on both servers.
struct SandboxedStreams {
    /// The key the sandbox's own pid is kept under.
    static let sandboxPIDKey = "application.process.sandbox_id"
    static let appIDKey = "pipewire.access.portal.app_id"

    /// Looks a process up (replaced in tests).
    private let identify: (Int32, String?) -> Sandbox.Identity

    init(identify: @escaping (Int32, String?) -> Sandbox.Identity = Sandbox.identify(pid:binary:)) {
        self.identify = identify
    }

    /// What the process of a stream seen for the first time turns out to be (nil for a stream with no
    /// process id); `found` hears of a sandbox (for the log). Kept in the stream's record
    /// (``LiveStream/sandbox``): the lookup is made on its first sight only.
    func identity(of input: SinkInput, found: (Sandbox.Identity) -> Void = { _ in }) -> Sandbox.Identity? {
        guard let pid = input.processID.flatMap({ Int32(exactly: $0) }), pid > 0 else { return nil }
        let identity = identify(pid, input.properties["application.process.binary"])
        if identity.sandboxPID != nil { found(identity) }
        return identity
    }

    /// `input` with its real identity in its properties.
    static func identified(_ input: SinkInput, as identity: Sandbox.Identity?) -> SinkInput {
        guard let identity else { return input }
        var input = input
        input.properties = apply(identity, to: input.properties)
        return input
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
