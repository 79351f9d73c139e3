import EventLoop
import FoundationEssentials
import FoundationGaps
import Glibc
import SoundServer

/// An output that comes and goes in the soak: a sink with a Bluetooth headset's properties that the
/// soak loads, the user moves streams onto, and that then goes away in one of three ways.
///
/// Outputs are the one interruption that holds a stream muted on purpose after it is over (a player-less
/// stream heard on a lost output stays muted until the user acts), so an episode runs to its end before
/// a checkpoint looks: after a loss, the user acts on every stream that was on the headset (a volume
/// change, which the policy counts as acting) once the switch window has passed. From then on, as after
/// a profile switch or the user's own move, the checkpoint's rule holds: every stream at the user's
/// level, muted only if the user muted it.
final class OutputEpisode {
    /// How the headset goes.
    enum Ending: CaseIterable {
        /// Switched off or out of battery: the sink is removed and the server moves its streams.
        case lost
        /// A Bluetooth profile switch: removed, the same device back at once, the streams moved back
        /// (then, later, the user moves them away).
        case profileSwitch
        /// The user moves the streams back to the speakers, then the headset goes with nothing on it.
        case userMovesAway
    }

    enum Step {
        /// Loaded, streams moved onto it; the ending is due.
        case playing
        /// Lost; the user acts on these streams when it is due.
        case lost([UInt32])
        /// The user moved the streams away; the headset goes when it is due (a second or two later: the
        /// engine takes a move followed within 500 ms by the old sink's removal for the server's rescue
        /// move, a known gap no person's hand is quick enough for).
        case movedAway
    }

    let number: Int
    let sinkName: String
    /// The module that holds the sink now (a profile switch loads a new one).
    var module: String
    /// The sink the user plays on otherwise, as the server named it before the headset came.
    let speakers: String
    var ending: Ending
    var step = Step.playing
    var dueAt: UInt64

    init(number: Int, module: String, speakers: String, ending: Ending, dueAt: UInt64) {
        self.number = number
        sinkName = "soak_headset_\(number)"
        self.module = module
        self.speakers = speakers
        self.ending = ending
        self.dueAt = dueAt
    }

    /// The properties a Bluetooth headset's sink carries (the device's address is what tells a profile
    /// switch, the same device back, from another device).
    static func properties(number: Int) -> String {
        let address = String(printf: "AC:80:0A:00:%02X:%02X", (number >> 8) & 0xff, number & 0xff)
        return "device.description=soak-headset-\(number) device.string=\(address) api.bluez5.address=\(address) "
            + "device.bus=bluetooth device.form_factor=headset"
    }
}

extension SoakRun {
    /// Starts, steps or ends the output episode that is due (one at a time).
    func stepOutput(now: UInt64) {
        guard mixer.isReady else { return }
        guard let episode = output else {
            guard plan.outputInterval > 0, now >= nextOutput else { return }
            nextOutput = now + random.around(seconds: plan.outputInterval)
            return startOutput(now: now)
        }
        guard now >= episode.dueAt else { return }
        switch (episode.step, episode.ending) {
        case let (.lost(streams), _):
            if plan.fault == .userIgnoresLoss, !streams.isEmpty {
                faultInjected = true
                say(String(printf: "%7.1fs  fault injected: the user leaves ", elapsed)
                    + streams.map { "#\($0)" }.joined(separator: " ") + " alone after the headset went away")
                output = nil
                return
            }
            // Past the switch window: the user turns each one up or down, which counts as acting (a stream
            // in the middle of a ramp a moment later, when the plan has users avoid ramps).
            var waiting: [UInt32] = []
            for index in streams where levels.level(of: index) != nil && mixer.streams[index] != nil {
                guard isAtRest(index, now: now) else {
                    waiting.append(index)
                    continue
                }
                userSetsVolume(index, because: "after headset \(episode.number) went away")
            }
            if waiting.isEmpty {
                output = nil
            } else {
                episode.step = .lost(waiting)
                episode.dueAt = now + 200_000
            }
        case (.playing, .lost):
            let streams = streamsOn(episode)
            guard pactl("unload-module \(episode.module)") != nil else { return abandon(episode) }
            trace("headset \(episode.number) goes away with \(streams.map { "#\($0)" }.joined(separator: " "))")
            report.outputsLost += 1
            episode.step = .lost(streams)
            episode.dueAt = now + 2_000_000
        case (.playing, .profileSwitch):
            let streams = streamsOn(episode)
            let script = "pactl unload-module \(episode.module) && "
                + "pactl load-module module-null-sink sink_name=\(episode.sinkName) "
                + "'sink_properties=\"\(OutputEpisode.properties(number: episode.number))\"'"
                + streams.map { " && { pactl move-sink-input \($0) \(episode.sinkName) || true; }" }.joined()
                + " && " + Self.keepDefault(episode.speakers)
            guard let module = pactl(raw: script)?.split(separator: "\n").first.map(String.init) else {
                return abandon(episode)
            }
            episode.module = module
            trace("headset \(episode.number) switches profile (module \(module)), \(streams.map { "#\($0)" }.joined(separator: " ")) moved back")
            report.outputProfileSwitches += 1
            // Later the user takes the streams back to the speakers.
            episode.ending = .userMovesAway
            episode.dueAt = now + UInt64(Double.random(in: 1.5...3, using: &random) * 1_000_000)
        case (.playing, .userMovesAway):
            let streams = streamsOn(episode)
            let moves = streams.map { "{ pactl move-sink-input \($0) \(episode.speakers) || true; }; " }.joined()
            _ = pactl(raw: moves + "true")
            trace("user moves \(streams.map { "#\($0)" }.joined(separator: " ")) to the speakers")
            episode.step = .movedAway
            episode.dueAt = now + UInt64(Double.random(in: 1...2, using: &random) * 1_000_000)
        case (.movedAway, _):
            let left = streamsOn(episode)
            _ = pactl("unload-module \(episode.module)")
            trace("headset \(episode.number) goes with \(left.isEmpty ? "nothing" : left.map { "#\($0)" }.joined(separator: " ")) on it")
            if left.isEmpty {
                report.outputsLeftEmpty += 1
                output = nil
            } else {
                // A stream started on it meanwhile (it was the default): that is a loss, and the user acts.
                report.outputsLost += 1
                episode.step = .lost(left)
                episode.dueAt = now + 2_000_000
            }
        }
    }

    /// A headset arrives and the user moves one to three live streams onto it (the music app's first:
    /// they live through checkpoints).
    func startOutput(now: UInt64) {
        var live = levels.streams.keys.filter { mixer.streams[$0] != nil }.sorted()
        if plan.fault == .userIgnoresLoss {
            // The fault needs a loss the rules call for: streams that play (a corked one is not heard).
            live = live.filter { index in appOfStream[index].flatMap { apps[$0] }.map { !$0.isCorked } ?? false }
        }
        guard !live.isEmpty, let speakers = pactl("get-default-sink").flatMap(Self.firstWord) else { return }
        nextOutputNumber += 1
        let number = nextOutputNumber
        let sinkName = "soak_headset_\(number)"
        guard let module = pactl(raw: "pactl load-module module-null-sink sink_name=\(sinkName) "
            + "'sink_properties=\"\(OutputEpisode.properties(number: number))\"'").flatMap(Self.firstWord) else { return }
        let music = live.filter { index in appOfStream[index].flatMap { apps[$0] }?.kind == .music }
        let others = live.filter { !music.contains($0) }
        let count = Int.random(in: 1...3, using: &random)
        let moved = Array((music.shuffled(using: &random) + others.shuffled(using: &random)).prefix(count))
        let script = Self.keepDefault(speakers) + "; "
            + moved.map { "{ pactl move-sink-input \($0) \(sinkName) || true; }; " }.joined() + "true"
        _ = pactl(raw: script)
        // Each way in turn, so that a short run has them all.
        let endings = OutputEpisode.Ending.allCases
        let ending = plan.fault == .userIgnoresLoss ? .lost : endings[(number - 1) % endings.count]
        let episode = OutputEpisode(number: number, module: module, speakers: speakers, ending: ending,
                                    dueAt: now + UInt64(Double.random(in: 1...3, using: &random) * 1_000_000))
        output = episode
        report.outputs += 1
        trace("headset \(number) (module \(module)) arrives; user moves \(moved.map { "#\($0)" }.joined(separator: " ")) onto it; it will end: \(ending)")
    }

    /// A script that sets the server's default sink back to `speakers` if a new sink took it (PipeWire
    /// picks the default by priority), as the user would, so that only moved streams play on a headset.
    static func keepDefault(_ speakers: String) -> String {
        "{ [ \"$(pactl get-default-sink)\" = '\(speakers)' ] || pactl set-default-sink '\(speakers)'; }"
    }

    /// The soak's streams the server shows on the episode's sink now.
    func streamsOn(_ episode: OutputEpisode) -> [UInt32] {
        guard let sink = sinkIndex(named: episode.sinkName) else { return [] }
        return mixer.streams.values.filter { $0.sinkIndex == sink && levels.level(of: $0.index) != nil }
            .map(\.index).sorted()
    }

    func sinkIndex(named name: String) -> UInt32? {
        guard let listing = pactl("list short sinks") else { return nil }
        for line in listing.split(separator: "\n") {
            let fields = line.split(separator: "\t")
            if fields.count > 1, fields[1] == name { return UInt32(fields[0]) }
        }
        return nil
    }

    /// The first word of a command's output (a module index, a sink name), nil if there is none.
    static func firstWord(_ output: String) -> String? {
        output.split(whereSeparator: \.isWhitespace).first.map(String.init)
    }

    /// An episode whose step failed (the server went meanwhile): dropped, its sink unloaded if still there.
    func abandon(_ episode: OutputEpisode) {
        trace("headset \(episode.number): abandoned (pactl failed)")
        _ = pactl("unload-module \(episode.module)")
        output = nil
    }

    /// The user changes a stream's volume (unequal channels), as in a mixer.
    func userSetsVolume(_ index: UInt32, because reason: String? = nil) {
        guard let stream = mixer.streams[index] else { return }
        let volume = ChannelVolumes(values: stream.volume.values.map { _ in randomLevel() },
                                    channelMap: stream.volume.channelMap)
        mixer.setVolume(index, to: volume)
        levels.userSet(index, volume: volume)
        trace("user sets #\(index) from \(stream.volume.values) to \(volume.values)" + (reason.map { " " + $0 } ?? ""))
        report.userVolumeChanges += 1
    }

    /// Runs `pactl ARGUMENTS` against the server the soak runs on; its output, or nil if it failed.
    func pactl(_ arguments: String) -> String? {
        pactl(raw: "pactl " + arguments)
    }

    /// Runs a shell script of pactl calls (the loop waits: each takes milliseconds); its standard output,
    /// or nil if it failed.
    func pactl(raw script: String) -> String? {
        let output = plan.folder + "/pactl.out"
        let log = plan.folder + "/pactl.log"
        guard let child = try? ChildProcess(["/bin/sh", "-c", "(\(script)) > '\(output)'"],
                                            environment: ProcessInfo.processInfo.environment, log: log),
              child.wait(timeout: 10) == .code(0) else {
            trace("pactl failed: \(script)")
            return nil
        }
        return (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    }
}
