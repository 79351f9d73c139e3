import ArgumentParser
import AudioPolicy
import AudioPolicyDaemon
import FoundationEssentials
import FoundationGaps
import Glibc

/// `audio-policyd check [POLICY...]`: validates policy files, reporting every error with its position.
///
/// Without files it checks the policy in force, merged — the base and every drop-in, as `run` would
/// load it — so an error in a drop-in is found in that drop-in, and one that only the merge shows (a
/// drop-in naming a class no file defines, or disabling a rule no earlier file has) too. A file named
/// is checked alone: a whole policy as it stands, a drop-in (a `[drop-in]` table, or a file in a
/// `policy.d` folder) over the embedded default.
struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check policy files and report every error as FILE:LINE:COLUMN: message.",
        discussion: """
            Without files: the policy in force (policy.toml or the embedded default, and the drop-ins of \
            /etc/audio-policyd/policy.d and $XDG_CONFIG_HOME/audio-policyd/policy.d), merged. A file named \
            is checked alone; a drop-in ([drop-in], or a file in a policy.d folder) over the embedded \
            default. Prints `FILE: ok` for each valid file. Exits with 1 if any file has an error.
            """
    )

    @Argument(help: ArgumentHelp("Policy files to check (default: the policy in force).", valueName: "policy"))
    var policies: [String] = []

    func run() throws {
        guard !policies.isEmpty else { return try checkInForce() }
        var failed = false
        for path in policies {
            do {
                _ = try PolicyFile.load(path: path)
                // Unbuffered, so `ok` lines and errors keep their order when both go to one file.
                StandardStream.output.write("\(path): ok\n")
            } catch {
                printErrors(error)
                failed = true
            }
        }
        if failed { throw ExitCode.failure }
    }

    /// The base and its drop-ins merged: `FILE: ok` for each when the whole loads.
    private func checkInForce() throws {
        let layers = PolicyFile.inForce(explicit: nil)
        do {
            _ = try PolicyFile.load(layers)
            for file in layers.files { StandardStream.output.write("\(file): ok\n") }
        } catch {
            printErrors(error)
            throw ExitCode.failure
        }
    }
}
