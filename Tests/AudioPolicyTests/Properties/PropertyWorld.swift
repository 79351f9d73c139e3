@testable import AudioPolicy
import Foundation
import Fuzzing

// The world the property tests draw from: a seeded RNG, the shipped policies, realistic stream
// identities (../shared/REAL-APPS.md), and a generator that reacts to the engine's commands the way a
// shell and real players would (a paused player reports Paused, a measured stream gets a verdict).

/// What a step of a sequence does: an engine event, a policy reload, or a tick at an arbitrary time.
enum PropertyAction: Hashable, Sendable {
    case event(Event)
    /// ``Event/policyReplaced(_:)`` with ``PropertyPolicies/all``[index].
    case reload(Int)
}

/// One step: `gap` ms after the previous one (0 = the same instant), then `action`.
struct PropertyStep: Hashable, Sendable {
    var gap: Milliseconds
    var action: PropertyAction
}

/// The shipped policies: the built-in default and every `policies/*.toml`.
enum PropertyPolicies {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent() // Properties
        .deletingLastPathComponent() // AudioPolicyTests
        .deletingLastPathComponent() // Tests
        .deletingLastPathComponent()

    /// (name, absolute path or nil for the embedded default, policy).
    static let all: [(name: String, path: String?, policy: Policy)] = {
        var result: [(String, String?, Policy)] = [("embedded default", nil, .embeddedDefault)]
        let folder = repository.appendingPathComponent("policies")
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
            .filter { $0.hasSuffix(".toml") }.sorted()
        for file in files {
            let path = folder.appendingPathComponent(file).path
            do {
                let text = try String(contentsOfFile: path, encoding: .utf8)
                result.append((file, path, try PolicyLoader.load(text: text, file: path)))
            } catch {
                fatalError("cannot load \(path): \(error)")
            }
        }
        // The default with the opt-in `resume-when-back`, so that sequences reach it too (written out for
        // the fixtures a failure leaves).
        // And with the opt-in `closed-window = "pause"` on media, so that pauses by a closed window are in
        // the same runs.
        let text = Policy.embeddedDefaultText.replacingOccurrences(of: "resume-when-back = \"never\"",
                                                               with: "resume-when-back = \"10 s\"")
            .replacingOccurrences(of: "[class.primary]\n", with: "[class.primary]\nclosed-window = \"pause\"\n")
        let variant = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("audio-policyd-properties-default-resume-when-back.toml")
        try? text.write(to: variant, atomically: true, encoding: .utf8)
        do {
            result.append(("default + resume-when-back + closed-window", variant.path, try PolicyLoader.load(text: text, file: variant.path)))
        } catch {
            fatalError("cannot load the resume-when-back variant: \(error)")
        }
        return result
    }()
}

/// A realistic stream identity: properties as the server reports them, and the app's MPRIS player.
struct AppProfile: Sendable {
    var properties: Properties
    var player: String?
}

enum PropertyPool {
    static let apps: [AppProfile] = [
        // Players (no role, or music/video roles in both spellings).
        .init(properties: ["application.name": "mpv", "application.process.binary": "mpv",
                           "application.process.id": "2101", "media.name": "track.flac"],
              player: "org.mpris.MediaPlayer2.mpv"),
        .init(properties: ["media.role": "music", "application.name": "Spotify",
                           "application.process.binary": "spotify", "application.process.id": "2102"],
              player: "org.mpris.MediaPlayer2.spotify"),
        .init(properties: ["media.role": "music", "application.name": "Spotify",
                           "application.flatpak.id": "com.spotify.Client"],
              player: "org.mpris.MediaPlayer2.spotify"),
        .init(properties: ["application.name": "Firefox", "application.process.binary": "firefox-esr",
                           "application.process.id": "2103", "media.name": "AudioCallbackDriver"],
              player: "org.mpris.MediaPlayer2.firefox.instance_1_2103"),
        .init(properties: ["application.name": "Chromium", "application.process.binary": "chromium",
                           "application.process.id": "2104", "media.name": "Playback",
                           "application.icon_name": "chromium-browser"],
              player: "org.mpris.MediaPlayer2.chromium.instance2104"),
        .init(properties: ["application.name": "Chromium", "media.name": "Playback"], player: nil),
        .init(properties: ["media.role": "video", "application.name": "VLC media player (LibVLC 3.0.18)",
                           "application.process.binary": "vlc", "application.process.id": "2118"],
              player: "org.mpris.MediaPlayer2.vlc"),
        .init(properties: ["media.role": "Music", "application.name": "Lollypop",
                           "pipewire.access.portal.app_id": "org.gnome.Lollypop"],
              player: "org.mpris.MediaPlayer2.Lollypop"),
        .init(properties: ["media.role": "Movie", "application.name": "Totem", "application.process.id": "2128"],
              player: "org.mpris.MediaPlayer2.totem"),
        .init(properties: ["application.name": "telegram-desktop", "media.name": "Playback Stream",
                           "application.process.id": "2117"], player: nil),
        .init(properties: ["media.role": "Game", "application.name": "SDL Application",
                           "application.process.binary": "wine64-preloader"], player: nil),
        .init(properties: ["media.role": "podcast", "application.name": "gpodder", "application.process.id": "2112"],
              player: "org.mpris.MediaPlayer2.gPodder"),
        .init(properties: ["application.name": "Kasts", "application.id": "org.kde.kasts"],
              player: "org.mpris.MediaPlayer2.kasts"),
        // Calls.
        .init(properties: ["application.name": "WEBRTC VoiceEngine", "application.process.binary": "Discord",
                           "application.process.id": "2105", "media.name": "playStream"], player: nil),
        .init(properties: ["application.name": "Chromium", "application.process.binary": "Discord",
                           "application.process.id": "2105", "media.name": "Playback"], player: nil),
        .init(properties: ["application.name": "ZOOM VoiceEngine", "application.process.binary": "zoom",
                           "media.name": "playStream"], player: nil),
        .init(properties: ["media.role": "phone", "application.name": "Skype"], player: nil),
        .init(properties: ["media.role": "Communication", "application.name": "linphone",
                           "application.process.id": "2115"], player: nil),
        // Speech, prompts, notifications.
        .init(properties: ["application.name": "speech-dispatcher-espeak-ng", "application.process.binary": "sd_espeak-ng",
                           "application.process.id": "2107", "media.name": "playback"], player: nil),
        .init(properties: ["application.name": "eSpeak", "media.name": "Text-to-Speech"], player: nil),
        .init(properties: ["media.role": "Accessibility", "application.name": "orca", "application.process.id": "2121"],
              player: nil),
        .init(properties: ["media.role": "a11y", "application.name": "orca"], player: nil),
        .init(properties: ["media.role": "event", "event.id": "message-new-instant", "application.name": "Mutter",
                           "media.name": "message-new-instant"], player: nil),
        .init(properties: ["media.role": "event", "event.id": "bell-window-system", "application.name": "Firefox",
                           "application.process.id": "2103"], player: nil),
        .init(properties: ["media.role": "alert", "application.name": "Plasma Desktop Notifier"], player: nil),
        .init(properties: ["media.role": "Notification", "application.name": "swaync"], player: nil),
        .init(properties: ["application.name": "ALSA plug-in [canberra-gtk-play]"], player: nil),
        .init(properties: ["media.role": "Navigation", "application.name": "gnome-maps", "application.process.id": "2110"],
              player: nil),
        .init(properties: ["media.role": "navigation", "application.name": "osmand"], player: nil),
        .init(properties: ["media.role": "Emergency", "application.name": "cell-broadcast"], player: nil),
        .init(properties: ["media.role": "Assistant", "application.name": "mycroft"], player: nil),
        // Infrastructure.
        .init(properties: ["media.role": "filter", "application.name": "PulseAudio",
                           "media.name": "Simultaneous output to Built-in Audio"], player: nil),
        .init(properties: ["media.role": "Loopback", "application.name": "WirePlumber"], player: nil),
        .init(properties: ["media.role": "test", "application.name": "speaker-test"], player: nil),
        .init(properties: ["media.role": "production", "application.name": "obs"], player: nil),
    ]

    /// Apps recording from a microphone (browser and Electron calls, libwebrtc engines), and dictation
    /// through parec, which policies/listening.toml makes duck the media while it records.
    static let captures: [Properties] = [
        ["application.name": "parec", "application.process.binary": "pacat", "application.process.id": "2130"],
        ["application.name": "Chromium", "application.process.id": "2104", "media.name": "RecordStream"],
        ["application.name": "Firefox", "application.process.id": "2103"],
        ["application.name": "WEBRTC VoiceEngine", "application.process.binary": "Discord",
         "application.process.id": "2105", "media.name": "recStream"],
        ["application.name": "telegram-desktop", "application.process.id": "2117"],
    ]

    static let hookApps: [Properties] = [
        [:], ["application.name": "gnome-clocks"], ["application.process.id": "2110"],
        ["application.name": "mpv", "application.process.id": "2101"],
    ]

    static let extraPlayers = ["org.mpris.MediaPlayer2.kdeconnect", "org.mpris.MediaPlayer2.mpv",
                               "org.mpris.MediaPlayer2.chromium.instance2104"]

    /// Outputs: the built-in card (one sink, its active port the speakers or the headphones' jack), a
    /// Bluetooth headset under two profiles (the same device), a USB DAC (two sinks for the same device,
    /// a card profile change), and an HDMI output with no identity.
    static let builtIn: Properties = ["device.description": "Built-in Audio Analog Stereo", "device.string": "front:0",
                                      "device.form_factor": "internal", "device.bus": "pci", "alsa.card_name": "HDA Intel PCH"]
    static let speakerPort = OutputPort(name: "analog-output-speaker", type: "speaker", available: .unknown)
    static let headphonesPort = OutputPort(name: "analog-output-headphones", type: "headphones", available: .yes)
    static let headset: Properties = ["device.description": "WH-1000XM4", "api.bluez5.address": "AC:80:0A:12:34:56",
                                      "device.string": "AC:80:0A:12:34:56", "device.form_factor": "headset",
                                      "device.bus": "bluetooth"]
    static let outputs: [(id: OutputID, output: Output)] = [
        ("headset-a2dp", Output(properties: headset.merging(["api.bluez5.profile": "a2dp-sink"]) { $1 })),
        ("headset-hfp", Output(properties: headset.merging(["api.bluez5.profile": "headset-head-unit"]) { $1 })),
        ("usb", Output(properties: ["device.description": "USB Audio DAC", "device.string": "hw:2", "device.bus": "usb",
                                    "device.bus_path": "pci-0000:00:14.0-usb-0:2:1.0"])),
        ("usb-iec958", Output(properties: ["device.description": "USB Audio DAC Digital", "device.string": "hw:2",
                                           "device.bus": "usb", "device.bus_path": "pci-0000:00:14.0-usb-0:2:1.0"])),
        ("hdmi", Output(properties: ["device.description": "HDMI"])),
    ]

    /// Windows a focus source names: each app's process, its binary alone (a window whose process plays
    /// nothing), and a process with no stream at all.
    static let windows: [AppIdentity] = {
        var result: [AppIdentity] = []
        for app in apps {
            if let pid = app.properties["application.process.id"].flatMap(Int.init) {
                result.append(AppIdentity(pid: pid, name: app.properties["application.process.binary"]))
            }
            if let binary = app.properties["application.process.binary"] { result.append(AppIdentity(name: binary)) }
        }
        var unique: [AppIdentity] = []
        for identity in result where !unique.contains(identity) { unique.append(identity) }
        return unique + [AppIdentity(pid: 9999, name: "xterm")]
    }()

    static let streams: [StreamID] = (1...7).map { StreamID("s\($0)") }
    static let hooks: [StreamID] = ["h1", "h2", "h3"]
    static let capturesIDs: [StreamID] = ["c1", "c2"]
    static let claims: [StreamID] = ["claim1", "claim2"]
}

/// Generates a sequence step by step, reacting to the engine's commands as the shell and players would.
struct PropertyGenerator {
    var rng: SplitMix64
    let length: Int
    let policyIndex: Int
    private var produced = 0
    private var live: [StreamID: PlayerID?] = [:]
    private var liveOrder: [StreamID] = []
    private var hooks: [StreamID] = []
    private var captures: [StreamID] = []
    private var players: [PlayerID] = []
    /// Steps owed to what happened (a player's echo, a meter's verdict), in order.
    private var queue: [PropertyStep] = []
    /// Taken next, whatever else is queued (a stream created corked).
    private var forced: PropertyStep?
    /// The outputs there, and the output each live stream plays on.
    private var outputs: [OutputID: Output] = [:]
    private var location: [StreamID: OutputID] = [:]

    init(seed: UInt64) {
        rng = SplitMix64(seed: seed)
        length = rng.int(5...40)
        policyIndex = rng.int(0...(PropertyPolicies.all.count - 1))
        // The built-in card is there from the start, on its speakers or its headphones.
        forced = PropertyStep(gap: 0, action: .event(.output("speakers", Output(
            properties: PropertyPool.builtIn, port: rng.chance(0.5) ? PropertyPool.headphonesPort : PropertyPool.speakerPort))))
    }

    /// The gap before the next step: often 0 (same-instant orders), else up to a few seconds.
    private mutating func gap() -> Milliseconds {
        let r = rng.int(0...99)
        if r < 40 { return 0 }
        if r < 70 { return rng.int(1...300) }
        if r < 90 { return rng.int(301...2000) }
        return rng.int(2001...5000)
    }

    mutating func next(after commands: [Command]) -> PropertyStep? {
        react(to: commands)
        guard produced < length else { return nil }
        produced += 1
        let step: PropertyStep
        if let forced {
            step = forced
            self.forced = nil
        } else if !queue.isEmpty, rng.chance(0.6) {
            step = queue.removeFirst()
        } else {
            step = fresh()
        }
        track(step)
        return step
    }

    private mutating func react(to commands: [Command]) {
        for command in commands {
            switch command {
            case let .pause(id, _):
                if rng.chance(0.7) { queue.append(PropertyStep(gap: rng.int(0...40), action: .event(.playback(id, playing: false)))) }
                else if rng.chance(0.2) { queue.append(PropertyStep(gap: rng.int(200...2000), action: .event(.pauseIgnored(id)))) }
            case let .resume(id, _):
                if rng.chance(0.7) { queue.append(PropertyStep(gap: rng.int(0...40), action: .event(.playback(id, playing: true)))) }
            case let .measure(id, true):
                if rng.chance(0.5) { queue.append(PropertyStep(gap: 0, action: .event(.measuring(id)))) }
                if rng.chance(0.8) {
                    queue.append(PropertyStep(gap: rng.int(50...700), action: .event(.audibility(id, audible: rng.chance(0.5)))))
                }
            default:
                break
            }
        }
    }

    private mutating func track(_ step: PropertyStep) {
        guard case let .event(event) = step.action else { return }
        switch event {
        case let .streamStarted(id, _, player, _, _, _, output):
            if live[id] == nil { liveOrder.append(id) }
            live[id] = player
            if let output { location[id] = output }
            if let player, !players.contains(player) { players.append(player) }
        case let .streamEnded(id):
            live[id] = nil
            liveOrder.removeAll { $0 == id }
            location[id] = nil
        case let .output(id, output):
            outputs[id] = output
        case let .outputRemoved(id):
            outputs[id] = nil
        case let .streamMoved(id, output):
            if live[id] != nil { location[id] = output }
        case let .interruptionBegan(token, _, _), let .interruptionAfterCall(token, _, _):
            if !hooks.contains(token) { hooks.append(token) }
        case let .interruptionEnded(token):
            hooks.removeAll { $0 == token }
        case let .capture(id, _, _, _):
            if !captures.contains(id) { captures.append(id) }
        case let .captureEnded(id):
            captures.removeAll { $0 == id }
        case let .playerChanged(id, player):
            if live[id] != nil { live[id] = player }
            if let player, !players.contains(player) { players.append(player) }
        default:
            break
        }
    }

    private mutating func someStream() -> StreamID {
        if !liveOrder.isEmpty, rng.chance(0.9) { return rng.pick(liveOrder) }
        return rng.pick(PropertyPool.streams)
    }

    private mutating func startEvent() -> PropertyStep {
        let id = liveOrder.count >= 5 || rng.chance(0.1) ? rng.pick(PropertyPool.streams)
            : PropertyPool.streams.first { live[$0] == nil } ?? rng.pick(PropertyPool.streams)
        let app = rng.pick(PropertyPool.apps)
        var properties = app.properties
        if rng.chance(0.15) { properties["application.process.id"] = nil }
        var player = app.player.map(PlayerID.init)
        if player != nil, rng.chance(0.25) { player = nil }
        if player == nil, rng.chance(0.05) { player = PlayerID(rng.pick(PropertyPool.extraPlayers)) }
        // A stream created corked (Chromium, Firefox, Spotify, a softphone before its call): as the daemon
        // reports it, or as started and paused in the same instant.
        let corked = rng.chance(0.2)
        var output: OutputID?
        if !outputs.isEmpty, rng.chance(0.9) {
            // Where it plays, told right after it starts (or a little later); told with the start for every
            // other new stream told right after (as the daemon tells it; no draw of its own, so that each
            // seed keeps its sequence).
            let gap = rng.chance(0.8) ? 0 : rng.int(1...50)
            let to = rng.pick(outputs.keys.sorted())
            if gap == 0, liveOrder.count % 2 == 0 {
                output = to
            } else {
                queue.insert(PropertyStep(gap: gap, action: .event(.streamMoved(id, to: to))), at: 0)
            }
        }
        if !corked, rng.chance(0.1) { forced = PropertyStep(gap: 0, action: .event(.playback(id, playing: false))) }
        // Muted when first seen: the server restored its user's mute for the app or role.
        let muted = rng.chance(0.08)
        // Started at one of our saved levels or mutes: told right after the start, or when pipewire-pulse
        // tells its level late.
        if !muted, rng.chance(0.1) {
            let news = Event.startedAtOurSave(id, levelAway: rng.chance(0.7), mutedByUs: rng.chance(0.4))
            queue.insert(PropertyStep(gap: rng.chance(0.7) ? 0 : rng.int(1...100), action: .event(news)), at: 0)
        }
        // Its level told a few ms late (pipewire-pulse), muted or not: the engine asks again for what it
        // asked meanwhile.
        if rng.chance(0.15) {
            let news = Event.levelTold(id, muted: muted || rng.chance(0.2))
            queue.insert(PropertyStep(gap: rng.int(1...100), action: .event(news)), at: 0)
        }
        return PropertyStep(gap: gap(), action: .event(.streamStarted(id, properties, player: player, playing: !corked,
                                                                      muted: muted, output: output)))
    }

    /// Outputs coming and going: a device appearing (sometimes the one just removed: a profile switch, or
    /// the device back later), removed (the server moving its streams to the built-in card, before or
    /// after it says so), the built-in card's jack plugged and pulled, the user moving a stream.
    private mutating func outputEvent() -> PropertyStep {
        let g = gap()
        let present = outputs.keys.sorted()
        let r = rng.int(0...99)
        if r < 25 || present.count <= 1 && r < 60 {
            let absent = PropertyPool.outputs.filter { outputs[$0.id] == nil }
            guard !absent.isEmpty else { return PropertyStep(gap: g, action: .event(.tick)) }
            let (id, output) = rng.pick(absent)
            if rng.chance(0.5) {
                // The streams of the same device move onto it (back from a profile switch), or the user's.
                for sid in liveOrder where rng.chance(0.6) {
                    queue.append(PropertyStep(gap: rng.int(0...60), action: .event(.streamMoved(sid, to: id))))
                }
            }
            return PropertyStep(gap: g, action: .event(.output(id, output)))
        }
        if r < 50 {
            let removable = present.filter { $0 != "speakers" }
            guard let id = removable.isEmpty ? nil : rng.pick(removable), let removed = outputs[id] else {
                return PropertyStep(gap: g, action: .event(.tick))
            }
            let rescued = liveOrder.filter { location[$0] == id }
            let removal = PropertyStep(gap: g, action: .event(.outputRemoved(id)))
            var moves = rescued.map { PropertyStep(gap: rng.int(0...5), action: .event(.streamMoved($0, to: "speakers"))) }
            if rng.chance(0.5), let same = PropertyPool.outputs.first(where: { $0.id != id && $0.output.device == removed.device }) {
                // A profile switch: the same device again, mostly within the switch window, and its streams back.
                let back = PropertyStep(gap: rng.chance(0.8) ? rng.int(0...900) : rng.int(901...3000),
                                        action: .event(.output(same.id, same.output)))
                moves.append(back)
                for sid in rescued where rng.chance(0.7) {
                    moves.append(PropertyStep(gap: rng.int(0...60), action: .event(.streamMoved(sid, to: same.id))))
                }
            }
            if !rescued.isEmpty, rng.chance(0.3) {
                // The removal announced after the moves.
                let first = moves.removeFirst()
                queue.insert(contentsOf: moves.prefix(rescued.count - 1) + [PropertyStep(gap: rng.int(0...400), action: removal.action)]
                             + moves.dropFirst(rescued.count - 1), at: 0)
                return PropertyStep(gap: g, action: first.action)
            }
            queue.insert(contentsOf: moves, at: 0)
            return removal
        }
        if r < 75 {
            // The built-in card's jack: headphones plugged, pulled, the port switched to the speakers.
            let port: OutputPort
            switch rng.int(0...3) {
            case 0: port = PropertyPool.headphonesPort
            case 1: port = OutputPort(name: PropertyPool.headphonesPort.name, type: "headphones", available: .no)
            case 2: port = PropertyPool.speakerPort
            default: port = outputs["speakers"]?.port ?? PropertyPool.speakerPort
            }
            return PropertyStep(gap: g, action: .event(.output("speakers", Output(properties: PropertyPool.builtIn, port: port))))
        }
        // The user moves a stream (pavucontrol, a new default sink).
        guard !present.isEmpty else { return PropertyStep(gap: g, action: .event(.tick)) }
        return PropertyStep(gap: g, action: .event(.streamMoved(someStream(), to: rng.pick(present))))
    }

    private mutating func fresh() -> PropertyStep {
        if liveOrder.isEmpty || rng.chance(0.12) { return startEvent() }
        if rng.chance(0.14) { return outputEvent() }
        let g = gap()
        let event: Event
        switch rng.int(0...99) {
        case 0..<8: event = .streamEnded(someStream())
        case 8..<18: event = .playback(someStream(), playing: rng.chance(0.5))
        case 18..<23:
            event = .userVolume(someStream(), Double(rng.int(0...150)) / 100, overtakesOurWrite: rng.chance(0.25))
        case 23..<27: event = .userMute(someStream(), rng.chance(0.6))
        case 27..<33:
            let policy = PropertyPolicies.all[policyIndex].policy
            let names = policy.classes.keys.sorted() + ["alarm"]
            let (token, className, app) = (rng.pick(PropertyPool.hooks), rng.pick(names), rng.pick(PropertyPool.hookApps))
            // A quarter wait for the call to end (interrupt --wait-for-call).
            event = rng.chance(0.25) ? .interruptionAfterCall(token: token, className: className, app)
                : .interruptionBegan(token: token, className: className, app)
        case 33..<37:
            event = .interruptionEnded(token: hooks.isEmpty ? rng.pick(PropertyPool.hooks) : rng.pick(hooks))
        case 37..<39:
            let player: PlayerID? = rng.chance(0.4) ? nil
                : PlayerID(rng.pick(PropertyPool.apps.compactMap(\.player) + PropertyPool.extraPlayers))
            event = .playerChanged(someStream(), player)
        case 39..<42: event = .pauseIgnored(someStream())
        case 42:
            event = .playerGone(players.isEmpty ? PlayerID(rng.pick(PropertyPool.extraPlayers)) : rng.pick(players))
        case 43:
            // What a player says of itself: a browser's player left Stopped, a player that names nothing.
            let player = rng.chance(0.5) && !players.isEmpty ? rng.pick(players)
                : PlayerID(rng.pick(PropertyPool.apps.compactMap(\.player) + PropertyPool.extraPlayers))
            event = .playerStatus(player, rng.pick(PlayerStatus.allCases))
        case 44..<48:
            event = .streamChanged(someStream(), rng.pick(PropertyPool.apps).properties)
        case 48..<50:
            let app = rng.pick(PropertyPool.hookApps + [["application.name": "kdeconnect"]])
            event = .nowPlayingClaimed(rng.pick(PropertyPool.claims), app,
                                       player: rng.chance(0.5) ? PlayerID("org.mpris.MediaPlayer2.kdeconnect") : nil)
        case 50..<64: event = .audibility(someStream(), audible: rng.chance(0.5))
        case 64..<67: event = .measuring(someStream())
        case 67..<71:
            // Mostly a recording; sometimes a monitor's capture, or one its app corks (or uncorks) later.
            event = .capture(rng.pick(PropertyPool.capturesIDs), rng.pick(PropertyPool.captures),
                             monitor: rng.chance(0.15), corked: rng.chance(0.2))
        case 71..<74:
            event = .captureEnded(captures.isEmpty ? rng.pick(PropertyPool.capturesIDs) : rng.pick(captures))
        case 74 where rng.chance(0.3):
            // The server goes away: each of its streams and captures ends, then the engine hears it is gone.
            let ends = liveOrder.map { PropertyStep(gap: 0, action: .event(.streamEnded($0))) }
                + captures.map { PropertyStep(gap: 0, action: .event(.captureEnded($0))) }
            queue.insert(contentsOf: ends.dropFirst() + [PropertyStep(gap: 0, action: .event(.serverGone))], at: 0)
            event = ends.first.flatMap { if case let .event(first) = $0.action { first } else { nil } } ?? .serverGone
        case 74..<77: event = .tick
        case 77..<80:
            return PropertyStep(gap: g, action: .reload(rng.int(0...(PropertyPolicies.all.count - 1))))
        case 80..<84:
            // The focus source: a window gets focus (or none has: the desktop), one closes, an app's last
            // one closes, the source goes.
            switch rng.int(0...9) {
            case 0..<6: event = .focus(rng.chance(0.15) ? nil : rng.pick(PropertyPool.windows))
            case 6..<8: event = .windowClosed(rng.pick(PropertyPool.windows))
            case 8: event = .lastWindowClosed(rng.pick(PropertyPool.windows))
            default: event = .focusUnknown
            }
        default:
            return startEvent()
        }
        return PropertyStep(gap: g, action: .event(event))
    }
}
