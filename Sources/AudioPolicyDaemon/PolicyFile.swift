import AudioPolicy
import FoundationEssentials
import FoundationGaps
import Glibc

/// Reads policy files for the daemon and the subcommands: which files make the policy in force (a
/// base and its drop-ins), and their text.
///
/// The policy in force is the base — `$XDG_CONFIG_HOME/audio-policyd/policy.toml`, else
/// `/etc/audio-policyd/policy.toml`, else the embedded default — then every `*.toml` of
/// `/etc/audio-policyd/policy.d/` and `$XDG_CONFIG_HOME/audio-policyd/policy.d/`, sorted by file name
/// across both folders, later ones winning; a user's file with the name of a system one replaces it
/// (as systemd's drop-ins do: an empty one, or a link to /dev/null, takes the system one away). An
/// explicit `--policy FILE` is that file alone, with no drop-ins, so that what it does is reproducible.
public enum PolicyFile {
    /// The system's drop-in folder.
    public static let systemDropInFolder = "/etc/audio-policyd/policy.d"

    /// The files a policy is merged from: a base (nil: the embedded default) and its drop-ins, in order.
    public struct Layers: Equatable, Sendable {
        public var base: String?
        public var dropIns: [String]

        public init(base: String?, dropIns: [String] = []) {
            self.base = base
            self.dropIns = dropIns
        }

        /// Every file, the embedded default named as such: what `doctor` and the reload log list.
        public var files: [String] { [base ?? Policy.embeddedDefaultSource] + dropIns }
    }

    /// Loads the policy at `path` alone, or ``Policy/embeddedDefault`` for nil. A file in a `policy.d`
    /// folder, or with a `[drop-in]` table, is a drop-in laid over the embedded default. An unreadable
    /// file is one located error, `PATH:1:1: cannot read: reason`, like any other.
    public static func load(path: String?) throws(LocatedErrors) -> Policy {
        guard let path else { return Policy.embeddedDefault }
        let role: PolicyText.Role = path.pathFolder.pathLastComponent == "policy.d" ? .dropIn : .policy
        return try PolicyLoader.load([PolicyText(text: try readText(path), file: path, role: role)])
    }

    /// Loads the base and its drop-ins, merged; every unreadable file and every error of each file is
    /// reported, each as `FILE:LINE:COLUMN: message`.
    public static func load(_ layers: Layers) throws(LocatedErrors) -> Policy {
        guard !layers.dropIns.isEmpty else { return try load(path: layers.base) }
        var texts: [PolicyText] = []
        var unreadable: [LocatedError] = []
        let base = layers.base.map { ($0, PolicyText.Role.policy) }
        for (path, role) in [base].compactMap({ $0 }) + layers.dropIns.map({ ($0, PolicyText.Role.dropIn) }) {
            do {
                texts.append(PolicyText(text: try readText(path), file: path, role: role))
            } catch {
                unreadable += error.errors
            }
        }
        guard unreadable.isEmpty else { throw LocatedErrors(unreadable) }
        if layers.base == nil {
            texts.insert(PolicyText(text: Policy.embeddedDefaultText, file: Policy.embeddedDefaultSource, role: .policy),
                         at: 0)
        }
        return try PolicyLoader.load(texts)
    }

    /// The UTF-8 text of the file at `path`.
    public static func readText(_ path: String) throws(LocatedErrors) -> String {
        func cannotRead(_ reason: String) -> LocatedErrors {
            LocatedErrors([LocatedError(SourceLocation(file: path, line: 1, column: 1), "cannot read: \(reason)")])
        }
        // POSIX rather than Foundation, for the short reason (`no such file or directory`, `is a directory`).
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw cannotRead(errorText(errno)) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw cannotRead(errorText(errno)) }
            if count == 0 { break }
            bytes += buffer[..<count]
        }
        guard let text = String(bytes: bytes, encoding: .utf8) else { throw cannotRead("not UTF-8 text") }
        return text
    }

    /// The files of the policy in force: the explicit one alone, else the configured base
    /// (``configuredPath(explicit:environment:)``) and the drop-ins (``dropIns(environment:systemFolder:)``).
    public static func inForce(explicit: String?,
                               environment: [String: String] = ProcessInfo.processInfo.environment,
                               systemFolder: String = systemDropInFolder) -> Layers {
        if let explicit { return Layers(base: explicit) }
        return Layers(base: configuredPath(explicit: nil, environment: environment),
                      dropIns: dropIns(environment: environment, systemFolder: systemFolder))
    }

    /// The policy file in force: the explicit one, else the user's, else the system's, else none
    /// (the embedded default).
    public static func configuredPath(explicit: String?,
                                      environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let explicit { return explicit }
        for candidate in [(configFolder(environment) ?? "") + "/audio-policyd/policy.toml", "/etc/audio-policyd/policy.toml"]
            where FileManager.default.fileExists(atPath: candidate) {
            return candidate
        }
        return nil
    }

    /// The drop-in folders, the system's first: `/etc/audio-policyd/policy.d`, then the user's
    /// `$XDG_CONFIG_HOME/audio-policyd/policy.d` (`~/.config` when XDG_CONFIG_HOME is unset or empty).
    public static func dropInFolders(environment: [String: String] = ProcessInfo.processInfo.environment,
                                     systemFolder: String = systemDropInFolder) -> [String] {
        [systemFolder] + (configFolder(environment).map { [$0 + "/audio-policyd/policy.d"] } ?? [])
    }

    /// Every `*.toml` of the drop-in folders (names starting with `.` left out: editors' temporary files),
    /// sorted by file name across the folders (byte order, as systemd sorts); a name in the user's folder
    /// replaces the same name in the system's.
    public static func dropIns(environment: [String: String] = ProcessInfo.processInfo.environment,
                               systemFolder: String = systemDropInFolder) -> [String] {
        var byName: [String: String] = [:]
        for folder in dropInFolders(environment: environment, systemFolder: systemFolder) {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            for name in names where name.hasSuffix(".toml") && !name.hasPrefix(".") {
                let path = folder + "/" + name
                var info = stat()
                // Files and links to them (or to /dev/null, which masks a system drop-in); no folders.
                guard stat(path, &info) == 0, info.st_mode & S_IFMT != S_IFDIR else { continue }
                byName[name] = path
            }
        }
        return byName.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.compactMap { byName[$0] }
    }

    /// `$XDG_CONFIG_HOME`, else `~/.config`; nil with neither.
    private static func configFolder(_ environment: [String: String]) -> String? {
        environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["HOME"].map { $0 + "/.config" }
    }

    private static func errorText(_ code: Int32) -> String {
        lowercasingFirst(String(cString: strerror(code)))
    }

    private static func lowercasingFirst(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.lowercased() + text.dropFirst()
    }
}

/// Writes each error as `FILE:LINE:COLUMN: message` on standard error.
public func printErrors(_ errors: LocatedErrors) {
    for error in errors.errors {
        StandardStream.error.write((error.description + "\n"))
    }
}
