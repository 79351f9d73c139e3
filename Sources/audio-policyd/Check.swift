import ArgumentParser
import AudioPolicy
import AudioPolicyDaemon
import FoundationEssentials
import FoundationGaps
import Glibc

/// `audio-policyd check POLICY...`: validates policy files, reporting every error with its position.
struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check policy files and report every error as FILE:LINE:COLUMN: message.",
        discussion: "Prints `FILE: ok` for each valid file. Exits with 1 if any file has an error."
    )

    @Argument(help: ArgumentHelp("Policy files to check.", valueName: "policy"))
    var policies: [String]

    func run() throws {
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
}
