import FoundationEssentials
import FoundationGaps
import Glibc

/// Who a process really is when it runs in a Flatpak or Snap sandbox: its host pid and its app id.
///
/// A Flatpak app has its own pid namespace, so the `application.process.id` libpulse puts on its
/// streams is the pid *inside* the sandbox (often 2): on the host it names an unrelated process or none,
/// and PulseAudio adds no app id (pipewire-pulse does). The host process is found by its `NSpid` line
/// (host pid first, the sandbox's pid last) and the binary's name; the app id from the `.flatpak-info`
/// its sandbox shows at `/proc/PID/root`, or from a Snap's AppArmor label (`snap.NAME.APP`).
public enum Sandbox {
    /// What a stream's pid turned out to name.
    public struct Identity: Hashable, Sendable {
        /// The process on the host (in the daemon's pid namespace), when exactly one fits.
        public var hostPID: Int32?
        /// The pid the app gave, when it is one inside a sandbox's pid namespace (not a host pid).
        public var sandboxPID: Int32?
        /// The Flatpak app id or Snap name.
        public var appID: String?

        public init(hostPID: Int32? = nil, sandboxPID: Int32? = nil, appID: String? = nil) {
            self.hostPID = hostPID
            self.sandboxPID = sandboxPID
            self.appID = appID
        }
    }

    /// What is read of one process from `/proc/PID/status` and `/proc/PID/exe`.
    public struct Process: Hashable, Sendable {
        public var pid: Int32
        /// `Name:`, the command name (at most 15 bytes; argv[0]'s, so `paplay` for pacat's symlink).
        public var name: String
        /// `NSpid:`, from the reader's namespace to the innermost; one entry for a process not nested.
        public var nsPIDs: [Int32]
        /// The executable's file name (libpulse's `application.process.binary` is this), when readable.
        public var executable: String?

        public init(pid: Int32, name: String, nsPIDs: [Int32], executable: String? = nil) {
            self.pid = pid
            self.name = name
            self.nsPIDs = nsPIDs
            self.executable = executable
        }

        /// Whether it runs `binary`: its executable's name, or its command name (cut at 15 bytes).
        public func runs(_ binary: String) -> Bool {
            let base = binary.split(separator: "/").last.map(String.init) ?? binary
            return executable == base || Sandbox.runs(name, base)
        }

        /// Whether it can be a Flatpak app: Flatpak gives every app a pid namespace of its own (bwrap's
        /// `--unshare-pid`; a sub-sandbox shares its parent's, nested as well), so a process that is not
        /// nested has no `.flatpak-info` to look for.
        public var mayBeFlatpak: Bool { nsPIDs.count > 1 }
    }

    // MARK: - The rule

    /// The identity of a stream that says it comes from `pid` running `binary`, given the processes
    /// there are: pure, so it is tested with made-up tables.
    ///
    /// `pid` is a host process when it exists in our namespace, is not nested, and runs `binary` (when
    /// the stream names one). Otherwise the host processes whose innermost pid is `pid` and that run
    /// `binary` are its sandbox's candidates: one gives the host pid, several with one app id still
    /// give the app id. With none, `pid` is taken as it is (as before: nothing better is known).
    public static func identify(pid: Int32, binary: String?, process: (Int32) -> Process?,
                                all: () -> [Process], appID: (Process) -> String?) -> Identity {
        let own = process(pid)
        if let own, own.nsPIDs.count <= 1, binary.map(own.runs) ?? true {
            return Identity(hostPID: pid, appID: appID(own))
        }
        let candidates = all().filter { candidate in
            candidate.nsPIDs.count > 1 && candidate.nsPIDs.last == pid && (binary.map(candidate.runs) ?? true)
        }
        if candidates.count == 1, let host = candidates.first {
            return Identity(hostPID: host.pid, sandboxPID: pid, appID: appID(host))
        }
        guard !candidates.isEmpty else { return Identity(hostPID: pid, appID: own.flatMap(appID)) }
        let ids = Set(candidates.map(appID))
        return Identity(sandboxPID: pid, appID: ids.count == 1 ? ids.first! : nil)
    }

    /// Whether a process whose command name is `name` runs `binary` (the kernel cuts names at 15 bytes).
    public static func runs(_ name: String, _ binary: String) -> Bool {
        let base = binary.split(separator: "/").last.map(String.init) ?? binary
        return name == base || (name.utf8.count == 15 && base.utf8.starts(with: name.utf8))
    }

    // MARK: - Parsing

    /// The `Name:` and `NSpid:` lines of a `/proc/PID/status` file.
    public static func parseStatus(_ text: String, pid: Int32) -> Process? {
        var name: String?
        var nsPIDs: [Int32]?
        // Line by line, up to the two lines wanted (the 2nd and the 13th or so of about 60).
        var rest = Substring(text)
        while !rest.isEmpty, name == nil || nsPIDs == nil {
            let end = rest.firstIndex(of: "\n") ?? rest.endIndex
            let line = rest[..<end]
            rest = end == rest.endIndex ? "" : rest[rest.index(after: end)...]
            if name == nil, line.hasPrefix("Name:") {
                name = String(line.dropFirst(5)).trimmingWhitespace()
            } else if nsPIDs == nil, line.hasPrefix("NSpid:") {
                nsPIDs = line.dropFirst(6).split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { Int32($0) }
            }
        }
        guard let name else { return nil }
        let pids = nsPIDs ?? []
        return Process(pid: pid, name: name, nsPIDs: pids.isEmpty ? [pid] : pids)
    }

    /// The Snap name in an AppArmor label: `snap.spotify.spotify (enforce)` → `spotify`; nil for any
    /// other label (`unconfined`, `snap-update-ns.spotify`, a distribution's own profiles).
    public static func snapName(label: String) -> String? {
        let profile = label.split(separator: " ").first.map(String.init) ?? ""
        let parts = profile.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[0] == "snap", !parts[1].isEmpty else { return nil }
        return String(parts[1])
    }

    /// The pid in an MPRIS name's instance suffix (`org.mpris.MediaPlayer2.mpv.instance2` → 2): the
    /// player's own pid, which in a sandbox is the sandbox's pid.
    public static func instancePID(busName: String) -> Int32? {
        guard let last = busName.split(separator: ".").last, last.hasPrefix("instance") else { return nil }
        return Int32(last.dropFirst("instance".count))
    }

    // MARK: - Reading /proc

    /// The identity of a stream's process, read from `/proc`. The scan of the processes runs only when
    /// `pid` is not a host process running `binary`, and reads only those in another pid namespace.
    public static func identify(pid: Int32, binary: String?) -> Identity {
        identify(pid: pid, binary: binary, process: { hostProcess($0, running: binary) ?? process($0, running: binary) },
                 all: { sandboxedProcesses(running: binary) }, appID: appID(of:))
    }

    /// `/proc/PID/status`, read, and the executable's name from `/proc/PID/exe` — unless the command name
    /// already shows it runs `binary`, which spares a `readlink` on the way to most new streams'
    /// decisions (nil: no binary in question, the executable is read).
    public static func process(_ pid: Int32, running binary: String? = nil) -> Process? {
        guard let text = ProcFile.text("/proc/\(pid)/status"),
              let process = parseStatus(text, pid: pid) else { return nil }
        return withExecutable(process, running: binary)
    }

    /// What ``process(_:running:)`` reads, for a process in the daemon's own pid namespace when that is
    /// not nested (a desktop's, and nearly every stream's): its command name from `/proc/PID/comm`, and
    /// no `NSpid` to read, since it has only its pid. Nil for any other process, and when the daemon
    /// runs nested (a container), where its status tells.
    ///
    /// Why: the kernel writes a status file of about 60 lines for each read, its memory figures taken
    /// under the process's memory lock, and the only lines wanted are two. On the way from a new
    /// stream's announcement to its duck, that read was half of the daemon's own share before the
    /// decision (bench's profile); one `readlink` of the namespace and the short `comm` cost a fraction.
    public static func hostProcess(_ pid: Int32, running binary: String? = nil) -> Process? {
        guard let ours = ownNamespace, ownNamespaceIsTop, let theirs = namespace(of: String(pid)), theirs == ours,
              let comm = ProcFile.text("/proc/\(pid)/comm") else { return nil }
        let name = String(comm.drop { $0 == "\n" }.prefix { $0 != "\n" }).trimmingWhitespace()
        return withExecutable(Process(pid: pid, name: name, nsPIDs: [pid]), running: binary)
    }

    /// `process` with its executable's name read from `/proc/PID/exe`, unless its command name shows it
    /// runs `binary`.
    private static func withExecutable(_ process: Process, running binary: String?) -> Process {
        if let binary, runs(process.name, binary) { return process }
        var process = process
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/\(process.pid)/exe", &buffer, buffer.count - 1)
        if count > 0 {
            let path = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            process.executable = path.split(separator: "/").last.map(String.init)
        }
        return process
    }

    /// The daemon's own pid namespace, read once (a process's never changes).
    private static let ownNamespace = namespace(of: "self")
    /// Whether the daemon's pid namespace is the one `/proc` counts from (its own `NSpid` has one pid):
    /// then a process in it is not nested either.
    private static let ownNamespaceIsTop = process(getpid()).map { $0.nsPIDs.count == 1 } ?? false

    /// The processes in a pid namespace other than ours: the only ones a sandbox's pid can name (the
    /// rule above wants nested ones). Told apart by their `/proc/PID/ns/pid` link, one `readlink` each,
    /// so only they have their status read: the whole scan took 3-6 ms with every status read, on the
    /// path from a stream wrapped in a script to its decision. A process whose link cannot be read
    /// (another user's) is read in full, as before.
    public static func sandboxedProcesses(running binary: String? = nil) -> [Process] {
        let ours = ownNamespace
        return pids().compactMap { pid in
            if let ours, let theirs = namespace(of: String(pid)), theirs == ours { return nil }
            return process(pid, running: binary)
        }
    }

    /// The numeric entries of `/proc`, in order.
    private static func pids() -> [Int32] {
        guard let directory = opendir("/proc") else { return [] }
        defer { closedir(directory) }
        var pids: [Int32] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if let pid = Int32(name) { pids.append(pid) }
        }
        return pids.sorted()
    }

    /// The pid namespace a process is in (`pid:[4026531836]`), nil when it cannot be read.
    private static func namespace(of process: String) -> [CChar]? {
        var buffer = [CChar](repeating: 0, count: 64)
        let count = readlink("/proc/\(process)/ns/pid", &buffer, buffer.count)
        return count > 0 ? Array(buffer[..<count]) : nil
    }

    /// The app id of a host process: its Flatpak sandbox's `.flatpak-info`, else its Snap's AppArmor label.
    public static func appID(of pid: Int32) -> String? {
        if let id = ProcessTree.flatpakID(of: pid) { return id }
        return snapName(of: pid)
    }

    /// The app id of a process read from `/proc`: the `.flatpak-info` is looked for only where a
    /// Flatpak app can be (``Process/mayBeFlatpak``), the Snap label everywhere (Snap confines with
    /// AppArmor, in the host's pid namespace).
    public static func appID(of process: Process) -> String? {
        if process.mayBeFlatpak, let id = ProcessTree.flatpakID(of: process.pid) { return id }
        return snapName(of: process.pid)
    }

    /// The Snap name in a process's AppArmor label; nil at once where AppArmor is off.
    private static func snapName(of pid: Int32) -> String? {
        guard appArmorEnabled, let label = ProcFile.text("/proc/\(pid)/attr/current") else { return nil }
        return snapName(label: label.trimmingWhitespace())
    }

    /// Whether the kernel runs AppArmor, read once: it is chosen at boot and never turned on later, and a
    /// Snap's confinement label (`snap.NAME.APP`) exists only under it. Why: elsewhere (SELinux, or no
    /// security module: Fedora, Arch) `/proc/PID/attr/current` holds another module's context or cannot be
    /// read, and the read was one of the few path walks through `/proc` on the way from each new stream's
    /// announcement to its decision.
    static let appArmorEnabled = ProcFile.text("/sys/module/apparmor/parameters/enabled")?.hasPrefix("Y") ?? false
}
