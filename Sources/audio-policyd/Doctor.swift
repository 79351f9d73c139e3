import ArgumentParser
import AudioPolicy
import AudioPolicyDaemon
import ControlProtocol
import FoundationEssentials
import FoundationGaps
import Glibc

/// `audio-policyd doctor`: what in this session will not behave and why, each with the command that
/// fixes it; the exit status says whether all is fine (0), something is wrong (1) or could not be
/// checked (2), for scripts.
struct Doctor: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check this session for what will not behave (competing role policies, proxies, players without MPRIS…), with fixes.",
        discussion: "Exit status: 0 all fine, 1 problems found, 2 something could not be checked.")

    @OptionGroup var control: SocketOption

    @Flag(name: .long, help: "Print JSON: {\"status\": \"ok\"|\"problems\"|\"unchecked\", \"findings\": [{check, severity, problem, why, fix}]}.")
    var json = false

    func run() throws {
        let facts = gather()
        let findings = Diagnosis.findings(facts)
        let status = Finding.exitStatus(findings)
        if json {
            struct Report: Encodable {
                var status: String
                var findings: [Finding]
                var policyFiles: [String]
            }
            print(try DaemonStatus.json(Report(status: ["ok", "problems", "unchecked"][Int(status)], findings: findings,
                                               policyFiles: facts.policyFiles)))
            if status != 0 { throw ExitCode(status) }
            return
        }
        print("policy files in force: \(facts.policyFiles.joined(separator: ", "))")
        if findings.isEmpty {
            print("all fine: nothing in this session works against the daemon")
        } else {
            for finding in findings {
                print("\(finding.severity.rawValue): \(finding.problem)")
                print("  why: \(finding.why)")
                print("  fix: \(finding.fix)")
            }
        }
        if status != 0 { throw ExitCode(status) }
    }

    /// Reads the session: the sound server through pactl, processes from /proc, configs, the daemon.
    private func gather() -> SessionFacts {
        let environment = ProcessInfo.processInfo.environment
        let hasPactl = Self.onPath("pactl", environment)
        let serverAnswers = hasPactl ? Self.shell("pactl info").status == 0 : nil
        let modules = serverAnswers == true
            ? Self.shell("pactl list modules short").output.split(separator: "\n").compactMap { line in
                line.split(separator: "\t").dropFirst().first.map(String.init)
            } : nil
        let processes = Self.processNames()
        let home = environment["HOME"] ?? ""
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.config"
        let layers = PolicyFile.inForce(explicit: nil, environment: environment)
        var policyErrors: [String] = []
        do {
            _ = try PolicyFile.load(layers)
        } catch {
            policyErrors = error.errors.map(\.description)
        }
        let mpris = ["/etc/mpv/scripts/mpris.so", configHome + "/mpv/scripts/mpris.so", "/usr/lib/mpv-mpris/mpris.so"]
        return SessionFacts(
            serverAnswers: serverAnswers, modules: modules,
            wirePlumberRolePolicy: processes.contains("wireplumber") ? Self.wirePlumberRolePolicy(configHome: configHome) : nil,
            processes: processes, daemon: try? DaemonStatus.fetch(path: control.path), socket: control.path,
            mpvInstalled: Self.onPath("mpv", environment), mpvMPRISInstalled: mpris.contains { access($0, R_OK) == 0 },
            display: environment["DISPLAY"].flatMap { $0.isEmpty ? nil : $0 },
            swaySocket: (environment["SWAYSOCK"] ?? environment["I3SOCK"]).flatMap { $0.isEmpty ? nil : $0 },
            waylandDisplay: environment["WAYLAND_DISPLAY"].flatMap { $0.isEmpty ? nil : $0 },
            currentDesktop: environment["XDG_CURRENT_DESKTOP"],
            focusExtensionEnabled: Self.focusExtensionEnabled(environment["XDG_CURRENT_DESKTOP"], configHome: configHome),
            alsaConfigs: [home + "/.asoundrc", "/etc/asound.conf"].compactMap { try? String(contentsOfFile: $0, encoding: .utf8) },
            policyFiles: layers.files, policyErrors: policyErrors)
    }

    /// Whether the desktop's focus extension is on: KDE's kwinrc, GNOME's enabled-extensions setting.
    private static func focusExtensionEnabled(_ desktop: String?, configHome: String) -> Bool? {
        switch ShellFocusExtension(currentDesktop: desktop) {
        case .kwinScript?:
            return (try? String(contentsOfFile: configHome + "/kwinrc", encoding: .utf8)).map(ShellFocusExtension.kwinrcEnables) ?? false
        case .gnomeExtension?:
            let setting = shell("gsettings get org.gnome.shell enabled-extensions 2>/dev/null")
            return setting.status == 0 ? ShellFocusExtension.gnomeSettingEnables(setting.output) : nil
        case nil:
            return nil
        }
    }

    /// The first config file (user's, then the system's, then the shipped one) that turns WirePlumber's
    /// role policy on.
    private static func wirePlumberRolePolicy(configHome: String) -> String? {
        for folder in [configHome + "/wireplumber", "/etc/wireplumber", "/usr/share/wireplumber"] {
            for file in files(in: folder + "/policy.lua.d") where file.hasSuffix(".lua") {
                if let text = try? String(contentsOfFile: file, encoding: .utf8), WirePlumberConfig.luaEnablesRoles(text) {
                    return file
                }
            }
            for file in files(in: folder + "/wireplumber.conf.d") where file.hasSuffix(".conf") {
                if let text = try? String(contentsOfFile: file, encoding: .utf8), WirePlumberConfig.confEnablesRoles(text) {
                    return file
                }
            }
        }
        return nil
    }

    private static func files(in folder: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: folder))?.sorted().map { folder + "/" + $0 } ?? []
    }

    /// Command names of every process (`/proc/PID/comm`).
    private static func processNames() -> Set<String> {
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.filter { Int($0) != nil } ?? []
        return Set(pids.compactMap { try? String(contentsOfFile: "/proc/\($0)/comm", encoding: .utf8).trimmingWhitespace() })
    }

    private static func onPath(_ program: String, _ environment: [String: String]) -> Bool {
        (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").contains { access("\($0)/\(program)", X_OK) == 0 }
    }

    /// Runs a shell command line; its standard output and exit status (stderr is dropped).
    private static func shell(_ command: String) -> (output: String, status: Int32) {
        guard let pipe = popen(command + " 2>/dev/null", "r") else { return ("", -1) }
        var output = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, pipe)
            if count <= 0 { break }
            output += buffer[..<count]
        }
        let status = pclose(pipe)
        return (String(decoding: output, as: UTF8.self), (status >> 8) & 0xff)
    }
}
