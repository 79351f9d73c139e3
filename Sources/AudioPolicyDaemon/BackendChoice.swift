import ALSABackend
import EventLoop
import FoundationEssentials
import FoundationGaps
import Glibc
import PulseBackend
import SoundBackend

/// Which sound system the daemon acts on: a sound server through libpulse, or the ALSA plugins.
///
/// `auto` (the default) takes the sound server when one answers, else ALSA: a machine with PulseAudio
/// or PipeWire routes ALSA apps through the server already (the `pulse` ALSA plugin), and one without
/// has nothing else to act on. The choice is made once, at start; a server that appears later is not
/// switched to.
public enum BackendChoice: String, CaseIterable, Sendable {
    case auto
    case pulse
    case alsa

    /// `--backend`'s help, for both executables.
    public static let help = "Sound backend: alsa, pulse or auto (default: the sound server if one answers, else ALSA)."

    /// The backend to run: this one, or for `auto` what ``serverAnswers(environment:)`` finds.
    public func resolved(environment: [String: String] = ProcessInfo.processInfo.environment) -> BackendChoice {
        guard self == .auto else { return self }
        return Self.serverAnswers(environment: environment) ? .pulse : .alsa
    }

    /// The daemon's connection factory for a resolved backend: one connection per (re)connect (actuation
    /// keeps one bookkeeping of the server's saved levels for all of them).
    ///
    /// The one place the daemon names a backend: every other part knows a backend only as a
    /// ``SoundBackend/StreamServer`` (`scripts/check-backend-seam` holds the daemon to that), so another
    /// backend is a target beside these and a case here.
    public func connection(socketPath: String? = nil) -> (MainLoop) -> any StreamServer {
        switch self {
        case .alsa:
            { loop in ALSAPluginServer(loop: loop, socketPath: socketPath,
                                       rampMilliseconds: UInt32(RampStepper.stepInterval)) }
        case .pulse, .auto:
            { loop in PulseConnection(loop: loop, applicationName: "audio-policyd") }
        }
    }

    // MARK: - Is a sound server there?

    /// Whether a PulseAudio-protocol server (PulseAudio, pipewire-pulse) accepts a connection where
    /// libpulse would look: `PULSE_SERVER` (a unix socket there is tried; any other address is taken as
    /// an answer, since libpulse would go there), else `$XDG_RUNTIME_DIR/pulse/native`, else the
    /// system-wide `/run/pulse/native`. A unix `connect` to a listening socket completes at once and to
    /// a dead one fails at once (ECONNREFUSED, ENOENT): no waiting, no protocol spoken.
    public static func serverAnswers(environment: [String: String]) -> Bool {
        if let server = environment["PULSE_SERVER"], !server.isEmpty {
            // "unix:/path", "/path", or anything else libpulse takes (tcp:host, a list of servers).
            let paths = server.split(separator: " ").compactMap { address -> String? in
                if address.hasPrefix("unix:") { return String(address.dropFirst(5)) }
                return address.hasPrefix("/") ? String(address) : nil
            }
            return paths.isEmpty || paths.contains(where: accepts)
        }
        var candidates: [String] = []
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { candidates.append(runtime + "/pulse/native") }
        candidates.append("/run/pulse/native")
        return candidates.contains(where: accepts)
    }

    /// Whether a unix stream socket at `path` accepts a connection now.
    static func accepts(_ path: String) -> Bool {
        guard let address = try? UnixSocketAddress(path: path) else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return address.withSocketAddress { Glibc.connect(fd, $0, $1) } == 0
    }
}
