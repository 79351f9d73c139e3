/// Where a backend's connection stands: to a sound server (libpulse's context), or the ALSA backend's
/// socket serving the plugins.
public enum ConnectionState: Equatable, Sendable {
    /// Not connected; the backend's `connect()` starts it.
    case unconnected
    /// Connecting, authenticating, setting the client name.
    case connecting
    /// Connected; the server has described itself (``StreamServer/serverDescription``). The initial
    /// snapshot follows.
    case ready
    /// The connection could not be made or broke; the reason is the backend's.
    case failed(String)
    /// The backend was told to disconnect.
    case terminated
}
