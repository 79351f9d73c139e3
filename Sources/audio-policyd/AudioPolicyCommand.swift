import ArgumentParser
import AudioPolicyDaemon

/// `audio-policyd`: the root command; each concept is a subcommand in its own file.
@main
struct AudioPolicyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audio-policyd",
        abstract: "Audio interruption policy for Linux desktops: pause, duck and resume streams like a phone does.",
        version: DaemonLaunch.version,
        subcommands: [
            Run.self,
            Status.self,
            NowPlaying.self,
            Doctor.self,
            Monitor.self,
            Interrupt.self,
            Top.self,
            Record.self,
            Test.self,
            Plot.self,
            Bench.self,
            BenchStreams.self,
            Soak.self,
            Check.self,
            Explain.self,
            ALSAConfig.self,
        ]
    )
}
