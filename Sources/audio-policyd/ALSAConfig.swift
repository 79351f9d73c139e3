import ALSABackend
import ArgumentParser
import AudioPolicy
import AudioPolicyDaemon
import FoundationGaps
import Glibc

/// `audio-policyd alsa-config`: the ALSA configuration for a machine with no sound server.
struct ALSAConfig: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "alsa-config",
        abstract: "Print an ALSA configuration that puts every ALSA app behind audio-policyd's plugin.",
        discussion: """
            For a machine with no sound server: install the output as /etc/asound.conf (every user) or \
            ~/.asoundrc, and run `audio-policyd run` (it serves the plugin when no sound server answers). \
            pcm.!default goes through the plugin; each class of the policy gets pcm.audiopolicy_CLASS, \
            so an app opened there (aplay -D audiopolicy_navigation) is of that class.
            """
    )

    @Option(help: ArgumentHelp("The PCM the plugin plays into (default: a dmix on the first card).", valueName: "pcm"))
    var slave: String?

    @Option(help: ArgumentHelp("The plugin library (default: the one built next to this program, else alsa-lib's plugin folder).",
                               valueName: "path"))
    var plugin: String?

    @Option(help: ArgumentHelp("Policy file whose classes get a PCM each (default: the policy `run` would load, drop-ins included).",
                               valueName: "file"))
    var policy: String?

    func run() throws {
        let loaded: Policy
        do {
            loaded = try PolicyFile.load(PolicyFile.inForce(explicit: policy))
        } catch {
            printErrors(error)
            throw ExitCode.failure
        }
        guard let library = plugin.map(Self.absolute) ?? ALSAConfiguration.installedPlugin(besides: DaemonLaunch.thisExecutable()) else {
            StandardStream.error.write("""
                audio-policyd: no \(ALSAConfiguration.libraryName) next to this program or in alsa-lib's plugin \
                folder; build it with `make plugin` or name it with --plugin PATH\n
                """)
            throw ExitCode.failure
        }
        let configuration = ALSAConfiguration(pluginPath: library, slave: slave,
                                              classes: loaded.classes.keys.sorted())
        StandardStream.output.write(configuration.text)
    }

    private static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        guard let directory = getcwd(nil, 0) else { return path }
        defer { free(directory) }
        return String(cString: directory) + "/" + path
    }
}
