import AudioPolicy
import AudioPolicyDaemon
import Foundation
import Testing

/// Which drop-ins are in force, in which order, from the system's and the user's `policy.d` folders,
/// and how they load: by file name across both folders, a user's file replacing the system's of the
/// same name; an explicit policy alone. Each case with its control.
@Suite("Policy drop-in folders")
struct PolicyDropInFolderTests {
    /// A system folder and an XDG_CONFIG_HOME of their own, removed afterwards.
    final class Folders {
        let root: URL
        var system: String { root.appendingPathComponent("etc/policy.d").path }
        var config: String { root.appendingPathComponent("config").path }
        var user: String { config + "/audio-policyd/policy.d" }
        var environment: [String: String] { ["XDG_CONFIG_HOME": config, "HOME": "/nonexistent"] }

        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("dropins-\(UUID().uuidString)")
            for folder in [root.appendingPathComponent("etc/policy.d").path,
                           root.appendingPathComponent("config/audio-policyd/policy.d").path] {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            }
        }

        deinit { try? FileManager.default.removeItem(at: root) }

        func write(_ folder: String, _ name: String, _ text: String) throws {
            try text.write(toFile: folder + "/" + name, atomically: true, encoding: .utf8)
        }

        func dropIns() -> [String] {
            PolicyFile.dropIns(environment: environment, systemFolder: system)
        }

        func load() throws(LocatedErrors) -> Policy {
            try PolicyFile.load(PolicyFile.inForce(explicit: nil, environment: environment, systemFolder: system))
        }
    }

    @Test("by file name across both folders; a user's file replaces the system's of that name")
    func nameOrderAcrossFolders() throws {
        let folders = try Folders()
        try folders.write(folders.system, "10-a.toml", "")
        try folders.write(folders.system, "30-c.toml", "")
        try folders.write(folders.system, "50-x.toml", "[class.navigation]\nduck = \"-30 dB\"\n")
        try folders.write(folders.user, "20-b.toml", "")
        try folders.write(folders.user, "50-x.toml", "[class.navigation]\nhold = 900\n")
        // Not drop-ins: another suffix, an editor's hidden file, a folder.
        try folders.write(folders.user, "notes.txt", "[class.navigation]\nduck = \"-60 dB\"\n")
        try folders.write(folders.user, ".50-x.toml.swp.toml", "[class.navigation]\nduck = \"-60 dB\"\n")
        try FileManager.default.createDirectory(atPath: folders.user + "/90-folder.toml", withIntermediateDirectories: true)
        #expect(folders.dropIns() == [folders.system + "/10-a.toml", folders.user + "/20-b.toml",
                                      folders.system + "/30-c.toml", folders.user + "/50-x.toml"])

        let policy = try folders.load()
        #expect(policy.files == [Policy.embeddedDefaultSource] + folders.dropIns())
        let navigation = try #require(policy.classes["navigation"])
        #expect(navigation.hold == 900)
        // The system's 50-x.toml is replaced, not merged: its -30 dB is not in force.
        #expect(abs(navigation.duck.decibels - -20) < 0.01)
        #expect(navigation.origins["hold"]?.file == folders.user + "/50-x.toml")

        // Control: without the user's 50-x.toml, the system's is in force.
        try FileManager.default.removeItem(atPath: folders.user + "/50-x.toml")
        #expect(folders.dropIns().last == folders.system + "/50-x.toml")
        #expect(abs((try folders.load().classes["navigation"]?.duck.decibels ?? 0) - -30) < 0.01)
    }

    @Test("a bad drop-in is reported in its own file, by its full path; the good ones alone load")
    func badDropInLocated() throws {
        let folders = try Folders()
        try folders.write(folders.system, "10-good.toml", "[class.ambient]\nunfocused = \"duck\"\n")
        try folders.write(folders.user, "20-bad.toml", "# mine\n[class.navigation]\nduck = \"loud\"\n")
        do {
            _ = try folders.load()
            Issue.record("a bad drop-in loaded")
        } catch {
            #expect(error.errors.map(\.location) == [SourceLocation(file: folders.user + "/20-bad.toml", line: 3, column: 8)])
        }
        try folders.write(folders.user, "20-bad.toml", "# mine\n[class.navigation]\nduck = \"-30 dB\"\n")
        #expect(try folders.load().classes["ambient"]?.unfocused == .duck)
    }

    @Test("an explicit policy is that file alone: no drop-ins")
    func explicitPolicyAlone() throws {
        let folders = try Folders()
        try folders.write(folders.user, "10-games.toml", "[class.ambient]\nunfocused = \"duck\"\n")
        let explicit = PolicyFile.inForce(explicit: "/some/policy.toml", environment: folders.environment,
                                          systemFolder: folders.system)
        #expect(explicit == PolicyFile.Layers(base: "/some/policy.toml"))
        // Control: without --policy, the drop-in is in force.
        let inForce = PolicyFile.inForce(explicit: nil, environment: folders.environment, systemFolder: folders.system)
        #expect(inForce.dropIns == [folders.user + "/10-games.toml"])
    }

    @Test("a file in a policy.d folder named alone is a drop-in over the embedded default")
    func policyDFileAlone() throws {
        let folders = try Folders()
        try folders.write(folders.user, "10-games.toml", "[class.ambient]\nunfocused = \"duck\"\n")
        let policy = try PolicyFile.load(path: folders.user + "/10-games.toml")
        #expect(policy.files == [Policy.embeddedDefaultSource, folders.user + "/10-games.toml"])
        #expect(policy.classes["ambient"]?.unfocused == .duck)
        // Control: the same text elsewhere is a whole policy, and no whole one (it has no primary class).
        try folders.write(folders.config, "games.toml", "[class.ambient]\nunfocused = \"duck\"\n")
        #expect(throws: LocatedErrors.self) { try PolicyFile.load(path: folders.config + "/games.toml") }
    }

    @Test("XDG_CONFIG_HOME unset or empty: ~/.config")
    func userFolder() {
        #expect(PolicyFile.dropInFolders(environment: ["HOME": "/home/u"], systemFolder: "/s")
            == ["/s", "/home/u/.config/audio-policyd/policy.d"])
        #expect(PolicyFile.dropInFolders(environment: ["HOME": "/home/u", "XDG_CONFIG_HOME": ""], systemFolder: "/s")
            == ["/s", "/home/u/.config/audio-policyd/policy.d"])
        #expect(PolicyFile.dropInFolders(environment: ["XDG_CONFIG_HOME": "/c"], systemFolder: "/s")
            == ["/s", "/c/audio-policyd/policy.d"])
        #expect(PolicyFile.dropInFolders(environment: [:]) == [PolicyFile.systemDropInFolder])
    }
}
