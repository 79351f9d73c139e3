import ArgumentParser
import AudioPolicy
import AudioPolicyDaemon
import FoundationEssentials
import Glibc

/// `audio-policyd plot FIXTURE -o FILE.svg`: draws a fixture's replay as a timeline picture.
///
/// When music went quiet a person would rather look than read: a lane per stream with its gain in dB,
/// the ducks and pauses and why, the Now Playing owner, and each expectation held (green) or not (red).
struct Plot: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replay a fixture and draw its timeline as an SVG picture (open it in any browser).",
        discussion: """
            Draws a lane per stream: its policy gain in dB over time (ramps as the engine steps them), \
            bands where it was ducked, paused, muted or silent with the decision that caused them, the \
            Now Playing owner along the top, and each [[expect]] as a green (held) or red (failed, with \
            the expected value) mark. Exits 0 when the picture is written, whether or not the \
            expectations held (`audio-policyd test` gives the verdict); a fixture or policy that does \
            not load is reported as FILE:LINE:COLUMN: message, with exit status 1.
            Example: audio-policyd plot Tests/Fixtures/short/navigation-ducks-and-restores.toml -o nav.svg
            """)

    @Option(help: ArgumentHelp("Policy file to use (default: the fixture's own `policy`, else the embedded default).",
                               valueName: "file"))
    var policy: String?

    @Option(name: [.customShort("o"), .long],
            help: ArgumentHelp("Where to write the SVG (default: the fixture's name with .svg, here).",
                               valueName: "file.svg"))
    var output: String?

    @Argument(help: ArgumentHelp("The fixture to draw.", valueName: "fixture"))
    var fixture: String

    func run() throws {
        var policies = PolicyCache(override: policy)
        let timeline: Timeline
        let levels: Bool
        do {
            let loaded = try FixtureLoader.load(text: try PolicyFile.readText(fixture), file: fixture)
            levels = loaded.levels != nil
            timeline = Timeline.replay(loaded, policy: try policies.policy(for: loaded), reloads: try policies.reloads(for: loaded))
        } catch {
            printErrors(error)
            throw ExitCode.failure
        }
        // A levels fixture replays saved levels on a model server, not the engine: no lanes to draw.
        guard !levels else {
            throw ValidationError("\(fixture) is a levels fixture, which has no timeline; `audio-policyd test \(fixture)` replays it")
        }
        let path = output ?? TimelineFile.name(for: fixture)
        try TimelineFile.write(timeline, to: path)
        let result = timeline.result
        let held = result.outcomes.filter(\.held).count
        print("wrote \(path): \(held) of \(result.outcomes.count) expectations held")
    }
}
