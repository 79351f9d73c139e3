import Foundation
import SessionBus

/// A Flatpak-like sandbox, built as Flatpak builds one: the app in bubblewrap with its own pid
/// namespace (so it is pid 2 there) and a `/.flatpak-info` naming it, the sound server's socket bound
/// in, and the session bus reached through `xdg-dbus-proxy` — which runs on the host in a sandbox of
/// its own showing the same `/.flatpak-info`, so an MPRIS name's D-Bus pid is the proxy's and
/// `/proc/PID/root/.flatpak-info` names the app. Without an app id there is no `.flatpak-info` (the
/// control: a sandbox nobody can name). `deinit` kills the proxy.
final class FlatpakSandbox {
    /// Why no sandbox can be made here, or nil when one can.
    static let missing: String? = {
        for program in ["bwrap", "xdg-dbus-proxy"] where !SessionBus.installed(program) {
            return "\(program) is not installed (Debian: bubblewrap, xdg-dbus-proxy; scripts/test installs them)"
        }
        guard let result = try? outcome(["bwrap", "--unshare-pid", "--ro-bind", "/", "/", "true"], timeout: 10),
              result.code == 0 else {
            return "bwrap cannot create a pid namespace here (`bwrap --unshare-pid --ro-bind / / true` fails: "
                + "unprivileged user namespaces are off, or a container forbids them)"
        }
        return nil
    }()

    /// The pid the app has in its sandbox: bubblewrap's own init is 1.
    static let appPID: Int32 = 2

    let appID: String?
    private let folder: URL
    private let proxy: Child
    /// The proxy's socket, bound into the sandbox as its session bus.
    private var busSocket: String { folder.appendingPathComponent("bus").path }

    /// Starts the bus proxy and waits for its socket.
    init(appID: String?, changes: Changes) throws {
        self.appID = appID
        folder = try TestEnvironment.temporaryFolder("flatpak")
        guard let bus = SessionBus.address else { throw CommandFailure(description: "no session bus") }
        let busPath = bus.hasPrefix("unix:path=") ? String(bus.dropFirst("unix:path=".count)) : bus
        proxy = try Child(["bwrap"] + Self.root(info: try Self.info(appID, in: folder))
            + ["--bind", folder.path, folder.path, "--bind", busPath, busPath,
               "--", "xdg-dbus-proxy", bus, folder.appendingPathComponent("bus").path])
        let socket = folder.appendingPathComponent("bus").path
        try changes.await("xdg-dbus-proxy's socket \(socket)", timeout: 5) { () throws -> Probe<Void> in
            if let code = proxy.exitCode { throw CommandFailure(description: "xdg-dbus-proxy exited with \(code)") }
            return FileManager.default.fileExists(atPath: socket) ? .done(()) : .waiting("no socket yet")
        }
    }

    deinit {
        proxy.kill()
        try? FileManager.default.removeItem(at: folder)
    }

    /// Whether `pid` (an MPRIS name's D-Bus pid) is this sandbox's proxy.
    func isProxy(_ pid: Int32) -> Bool {
        ProcessTree.lineage(of: pid).contains(proxy.pid)
    }

    /// `arguments` as a command that runs them in the sandbox, with `files` bound in read-only.
    func command(_ arguments: [String], files: [String]) throws -> [String] {
        guard let server = TestEnvironment.soundServer, server.hasPrefix("unix:") else {
            throw CommandFailure(description: "the sound server is not on a unix socket")
        }
        let socket = String(server.dropFirst("unix:".count))
        var command = ["bwrap", "--unshare-pid"] + Self.root(info: try Self.info(appID, in: folder))
        command += ["--bind", socket, socket, "--bind", busSocket, "/run/flatpak/bus",
                    "--setenv", "DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/flatpak/bus",
                    "--setenv", "HOME", "/tmp", "--setenv", "XDG_RUNTIME_DIR", "/tmp"]
        for file in files { command += ["--ro-bind", file, file] }
        return command + ["--"] + arguments
    }

    /// The file shown as `/.flatpak-info`, written once; nil without an app id.
    private static func info(_ appID: String?, in folder: URL) throws -> String? {
        guard let appID else { return nil }
        let url = folder.appendingPathComponent("flatpak-info")
        if !FileManager.default.fileExists(atPath: url.path) {
            try "[Application]\nname=\(appID)\n".write(to: url, atomically: true, encoding: .utf8)
        }
        return url.path
    }

    /// A read-only system as a Flatpak runtime shows it (Debian's merged /usr), private /tmp, and the
    /// `.flatpak-info`.
    private static func root(info: String?) -> [String] {
        var arguments = ["--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
                         "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin", "--ro-bind", "/etc", "/etc",
                         "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--die-with-parent"]
        if let info { arguments += ["--ro-bind", info, "/.flatpak-info"] }
        return arguments
    }
}
