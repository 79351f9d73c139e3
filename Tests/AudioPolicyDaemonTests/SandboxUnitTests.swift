import AudioPolicy
@testable import AudioPolicyDaemon
import Foundation
import Glibc
import SessionBus
import Testing

/// Sandboxed apps: their real identity from made-up process tables, labels and key files, each with
/// the case that comes out the other way.
@Suite struct SandboxUnitTests {
    /// A host with kthreadd at pid 2, a host mpv at 500, and a Flatpak mpv at host pid 4242 (2 inside).
    static let host: [Sandbox.Process] = [
        Sandbox.Process(pid: 2, name: "kthreadd", nsPIDs: [2]),
        Sandbox.Process(pid: 500, name: "mpv", nsPIDs: [500]),
        Sandbox.Process(pid: 4240, name: "bwrap", nsPIDs: [4240]),
        Sandbox.Process(pid: 4241, name: "bwrap", nsPIDs: [4241, 1]),
        Sandbox.Process(pid: 4242, name: "mpv", nsPIDs: [4242, 2]),
    ]
    static let ids: [Int32: String] = [4242: "io.mpv.Mpv", 4241: "io.mpv.Mpv"]

    static func identify(_ pid: Int32, _ binary: String?, table: [Sandbox.Process] = host) -> Sandbox.Identity {
        Sandbox.identify(pid: pid, binary: binary, process: { pid in table.first { $0.pid == pid } },
                         all: { table }, appID: { ids[$0.pid] })
    }

    @Test("a stream's pid that names another host process is the sandbox's: the host process running its binary is found")
    func sandboxPid() {
        #expect(Self.identify(2, "mpv") == Sandbox.Identity(hostPID: 4242, sandboxPID: 2, appID: "io.mpv.Mpv"))
        // Control: a host process running the binary is taken as it is.
        #expect(Self.identify(500, "mpv") == Sandbox.Identity(hostPID: 500))
        // Control: no binary named, an existing host pid is trusted (today's behaviour).
        #expect(Self.identify(2, nil) == Sandbox.Identity(hostPID: 2))
        // Control: no sandbox has a process at that pid running the binary: the pid is taken as it is.
        #expect(Self.identify(2, "vlc") == Sandbox.Identity(hostPID: 2))
    }

    @Test("the binary is the executable's name: paplay (a symlink to pacat) is pacat; a sandbox is not looked for")
    func executables() {
        let table = Self.host + [Sandbox.Process(pid: 700, name: "paplay", nsPIDs: [700], executable: "pacat")]
        #expect(Self.identify(700, "pacat", table: table) == Sandbox.Identity(hostPID: 700))
        #expect(Sandbox.Process(pid: 700, name: "paplay", nsPIDs: [700], executable: "pacat").runs("pacat"))
        #expect(!Sandbox.Process(pid: 700, name: "paplay", nsPIDs: [700], executable: "pacat").runs("mpv"))
    }

    @Test("a Flatpak id is looked for only in a nested process; control: the nested ones of the table")
    func flatpakOnlyNested() throws {
        #expect(!Self.host[1].mayBeFlatpak && !Self.host[2].mayBeFlatpak)
        #expect(Self.host[3].mayBeFlatpak && Self.host[4].mayBeFlatpak)
        // This test's own process is not nested: its .flatpak-info is not read, so its app id is the Snap
        // label's (none here), as `appID(of: pid)` finds by reading.
        let own = try #require(Sandbox.process(getpid()))
        #expect(!own.mayBeFlatpak && Sandbox.appID(of: own) == Sandbox.appID(of: getpid()))
    }

    @Test("the executable is read only when the command name does not show the binary; control: it is read when it does not")
    func executableReadOnlyWhenNeeded() throws {
        let name = try #require(Sandbox.process(getpid())?.name)
        #expect(Sandbox.process(getpid(), running: name)?.executable == nil, "the name shows it: no readlink")
        #expect(Sandbox.process(getpid(), running: "not-\(name)")?.executable != nil)
        #expect(Sandbox.process(getpid())?.executable != nil)
    }

    @Test("two sandboxes with the binary at one inner pid give no host pid, but their common app id")
    func ambiguous() {
        let table = Self.host + [Sandbox.Process(pid: 5000, name: "mpv", nsPIDs: [5000, 2])]
        #expect(Self.identify(2, "mpv", table: table) == Sandbox.Identity(sandboxPID: 2, appID: nil))
        let ids: [Int32: String] = [4242: "io.mpv.Mpv", 5000: "io.mpv.Mpv"]
        let same = Sandbox.identify(pid: 2, binary: "mpv", process: { pid in table.first { $0.pid == pid } },
                                    all: { table }, appID: { ids[$0.pid] })
        #expect(same == Sandbox.Identity(sandboxPID: 2, appID: "io.mpv.Mpv"))
    }

    @Test("command names are cut at 15 bytes; a path's last part is the binary")
    func names() {
        #expect(Sandbox.runs("telegram-deskto", "telegram-desktop"))
        #expect(Sandbox.runs("mpv", "/usr/bin/mpv"))
        #expect(!Sandbox.runs("mpv", "mpvx"))
        #expect(!Sandbox.runs("telegram", "telegram-desktop"))
    }

    @Test("/proc/PID/status gives Name and NSpid; a kernel without NSpid counts as not nested")
    func status() {
        let text = "Name:\tmpv\nUmask:\t0022\nState:\tS (sleeping)\nNSpid:\t4242\t2\nNSpgid:\t4242\t2\n"
        #expect(Sandbox.parseStatus(text, pid: 4242) == Sandbox.Process(pid: 4242, name: "mpv", nsPIDs: [4242, 2]))
        #expect(Sandbox.parseStatus("Name:\tsh\n", pid: 7) == Sandbox.Process(pid: 7, name: "sh", nsPIDs: [7]))
        #expect(Sandbox.parseStatus("garbage", pid: 7) == nil)
    }

    @Test("the /proc scan reads only processes in another pid namespace: a process in a new one is there, this one is not")
    func scanSkipsOurNamespace() throws {
        try Self.withNestedProcess { _ in
            let scanned = Sandbox.sandboxedProcesses()
            // Control: this process is in our namespace and readable, so it is left out.
            #expect(!scanned.contains { $0.pid == getpid() })
            #expect(Sandbox.process(getpid()) != nil)
        }
    }

    /// Runs `body` with `sleep` in a new pid namespace (pid 1 there), as bwrap starts an app, found by
    /// the scan. `unshare --fork` ignores SIGTERM while it waits for its child, so it is killed, and its
    /// child with it (`--kill-child`).
    static func withNestedProcess(_ body: (Sandbox.Process) throws -> Void) throws {
        let child = Foundation.Process()
        child.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        child.arguments = ["--user", "--map-root-user", "--pid", "--fork", "--kill-child", "sleep", "30"]
        try child.run()
        defer {
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
        }
        var nested: Sandbox.Process?
        for _ in 0..<200 where nested == nil {
            nested = Sandbox.sandboxedProcesses().first { $0.name == "sleep" && $0.nsPIDs.last == 1 }
            if nested == nil { usleep(10_000) }
        }
        try body(try #require(nested, "the process in the new pid namespace was not found (can this machine unshare a pid namespace?)"))
    }

    @Test("a process in our pid namespace reads the same from comm as from its status; control: a nested one is left to its status")
    func hostProcessReadsAsStatusDoes() throws {
        // Every process of ours that the short read takes is what the status gives, with and without a
        // binary in question (the executable read or spared alike).
        let ours = Sandbox.sandboxedProcesses().map(\.pid)
        var compared = 0
        for pid in try FileManager.default.contentsOfDirectory(atPath: "/proc").compactMap({ Int32($0) }) {
            guard let short = Sandbox.hostProcess(pid), let full = Sandbox.process(pid) else { continue }
            #expect(short == full, "pid \(pid)")
            #expect(Sandbox.hostProcess(pid, running: full.name) == Sandbox.process(pid, running: full.name), "pid \(pid)")
            compared += 1
        }
        #expect(compared > 1, "this process and its parent at least")
        #expect(Sandbox.hostProcess(getpid()) != nil && !ours.contains(getpid()))
        // Control: a process in a new pid namespace (as bwrap starts an app) is not read the short way: its
        // status says it is nested.
        try Self.withNestedProcess { nested in
            #expect(Sandbox.hostProcess(nested.pid) == nil)
            #expect(Sandbox.process(nested.pid)?.mayBeFlatpak == true)
        }
    }

    @Test("Snap names come from snap.NAME.APP AppArmor labels only")
    func snapLabels() {
        #expect(Sandbox.snapName(label: "snap.spotify.spotify (enforce)") == "spotify")
        #expect(Sandbox.snapName(label: "snap.firefox.hook.configure (complain)") == "firefox")
        #expect(Sandbox.snapName(label: "unconfined") == nil)
        #expect(Sandbox.snapName(label: "snap-update-ns.firefox (enforce)") == nil)
        #expect(Sandbox.snapName(label: "/usr/bin/man (enforce)") == nil)
    }

    @Test("an MPRIS name's instance suffix is the player's pid")
    func instances() {
        #expect(Sandbox.instancePID(busName: "org.mpris.MediaPlayer2.mpv.instance2") == 2)
        #expect(Sandbox.instancePID(busName: "org.mpris.MediaPlayer2.mpv") == nil)
        #expect(Sandbox.instancePID(busName: "org.mpris.MediaPlayer2.chromium.instance") == nil)
    }

    @Test("properties say the host pid, keep the sandbox pid apart and carry the app id in PipeWire's key")
    func properties() {
        let raw: Properties = ["application.process.id": "2", "application.process.binary": "mpv"]
        let found = SandboxedStreams.apply(Sandbox.Identity(hostPID: 4242, sandboxPID: 2, appID: "io.mpv.Mpv"), to: raw)
        #expect(found["application.process.id"] == "4242")
        #expect(found["application.process.sandbox_id"] == "2")
        #expect(found["pipewire.access.portal.app_id"] == "io.mpv.Mpv")
        // No single host process: no pid at all rather than the sandbox's.
        let unknown = SandboxedStreams.apply(Sandbox.Identity(sandboxPID: 2, appID: "io.mpv.Mpv"), to: raw)
        #expect(unknown["application.process.id"] == nil)
        // Control: a host process is left as it is; pipewire-pulse's own app id is kept.
        #expect(SandboxedStreams.apply(Sandbox.Identity(hostPID: 500), to: raw) == raw)
        let piped = raw.merging(["pipewire.access.portal.app_id": "io.mpv.Mpv"]) { $1 }
        #expect(SandboxedStreams.apply(Sandbox.Identity(sandboxPID: 2, appID: "other"), to: piped)["pipewire.access.portal.app_id"] == "io.mpv.Mpv")
    }

    @Test("a rule on the app id matches a sandboxed stream once its id is in the properties")
    func rules() {
        let matcher = PropertyMatcher(key: "app", patterns: [Glob("io.mpv.*")])
        let raw: Properties = ["application.process.id": "2", "application.name": "mpv"]
        #expect(!matcher.matches(raw))
        #expect(matcher.matches(SandboxedStreams.apply(Sandbox.Identity(sandboxPID: 2, appID: "io.mpv.Mpv"), to: raw)))
    }

    @Test("two instances of one sandboxed app: the instance whose suffix is the stream's sandbox pid plays it")
    func instanceTieBreak() {
        let first = PlayerMatch.Candidate(player: PlayerID("org.mpris.MediaPlayer2.mpv.instance2"), pid: 900,
                                          appIDs: ["io.mpv.Mpv"], instance: 2)
        let second = PlayerMatch.Candidate(player: PlayerID("org.mpris.MediaPlayer2.mpv.instance3"), pid: 901,
                                           appIDs: ["io.mpv.Mpv"], instance: 3)
        #expect(PlayerMatch.player(lineages: [], appIDs: ["io.mpv.Mpv"], sandboxPID: 3, among: [first, second]) == second.player)
        #expect(PlayerMatch.player(lineages: [], appIDs: ["io.mpv.Mpv"], sandboxPID: 2, among: [first, second]) == first.player)
        #expect(PlayerMatch.player(lineages: [], appIDs: ["io.mpv.Mpv"], sandboxPID: nil, among: [second, first]) == second.player)
        #expect(PlayerMatch.player(lineages: [], appIDs: ["org.other"], sandboxPID: 2, among: [first, second]) == nil)
    }

    @Test("playerctld and our own player are proxies, never a stream's player; real players are not")
    func proxies() {
        #expect(MPRIS.isProxy("org.mpris.MediaPlayer2.playerctld"))
        #expect(MPRIS.isProxy("org.mpris.MediaPlayer2.playerctld.instance77"))
        #expect(MPRIS.isProxy("org.mpris.MediaPlayer2.audiopolicy"))
        #expect(!MPRIS.isProxy("org.mpris.MediaPlayer2.mpv"))
        #expect(!MPRIS.isProxy("org.mpris.MediaPlayer2.audiopolicyx"))
        #expect(!MPRIS.isProxy("org.mpris.MediaPlayer2.spotify"))
    }
}
