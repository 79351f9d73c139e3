import AudioPolicy
import AudioPolicyDaemon
import ControlProtocol
import Foundation
import SessionBus
import Testing

// The pure parts behind MPRIS: process ancestry, player matching, D-Bus message encoding (libdbus's
// own marshalling, no bus needed), the event lines' JSON. No server, no bus: these always run.

@Suite("MPRIS pure parts: process ancestry, player matching")
struct MPRISMatchingTests {
    @Test("the parent pid is read after the last `)`, whatever the command name holds")
    func parsesStat() {
        #expect(ProcessTree.parseParent(stat: "4242 (mpv) S 4100 4242 4100 0 -1 4194560 1234") == 4100)
        #expect(ProcessTree.parseParent(stat: "77 (Web Content (x) ) R 12 77 12 0") == 12)
        #expect(ProcessTree.parseParent(stat: "1 (systemd) S 0 1 1 0") == nil)
        #expect(ProcessTree.parseParent(stat: "garbage") == nil)
    }

    @Test("a lineage is the process and its ancestors, nearest first, without pid 1, and survives a loop")
    func lineage() {
        let parents: [Int32: Int32] = [30: 20, 20: 10, 10: 1, 7: 8, 8: 7]
        #expect(ProcessTree.lineage(of: 30) { parents[$0] } == [30, 20, 10])
        #expect(ProcessTree.lineage(of: 7) { parents[$0] } == [7, 8])
        #expect(ProcessTree.lineage(of: 99) { parents[$0] } == [99])
        #expect(ProcessTree.lineage(of: Int32(getpid())).first == Int32(getpid()))
        #expect(ProcessTree.lineage(of: Int32(getpid())).contains(Int32(getppid())))
    }

    @Test("a Flatpak sandbox's app id comes from [Application] name=")
    func flatpakInfo() {
        let text = "[Instance]\nname=ignored\n\n[Application]\nruntime=runtime/org.gnome.Platform\nname=org.gnome.Lollypop\n"
        #expect(ProcessTree.parseFlatpakInfo(text) == "org.gnome.Lollypop")
        #expect(ProcessTree.parseFlatpakInfo("[Instance]\nname=x\n") == nil)
    }

    static let firefox = PlayerMatch.Candidate(player: PlayerID("org.mpris.MediaPlayer2.firefox.instance_1_42"), pid: 100)
    static let mpv = PlayerMatch.Candidate(player: PlayerID("org.mpris.MediaPlayer2.mpv"), pid: 200)
    static let lollypop = PlayerMatch.Candidate(player: PlayerID("org.mpris.MediaPlayer2.Lollypop"), pid: 300,
                                                appIDs: ["org.gnome.Lollypop"])

    @Test("a player plays the streams of its own process and of its descendants (a browser's audio process)")
    func ancestry() {
        let all = [Self.firefox, Self.mpv, Self.lollypop]
        #expect(PlayerMatch.player(lineages: [[200, 50]], appIDs: [], among: all) == Self.mpv.player)
        #expect(PlayerMatch.player(lineages: [[130, 120, 100, 50]], appIDs: [], among: all) == Self.firefox.player)
        #expect(PlayerMatch.player(lineages: [[400, 50]], appIDs: [], among: all) == nil)
    }

    @Test("the nearest ancestor wins: a player started from inside another app's process tree")
    func nearestWins() {
        let terminal = PlayerMatch.Candidate(player: PlayerID("org.mpris.MediaPlayer2.terminal"), pid: 20)
        let nested = PlayerMatch.Candidate(player: PlayerID("org.mpris.MediaPlayer2.mpv"), pid: 30)
        #expect(PlayerMatch.player(lineages: [[31, 30, 20]], appIDs: [], among: [terminal, nested]) == nested.player)
    }

    @Test("between equally near players the first listed wins: MPRIS players are listed before hooks' claims")
    func tiesGoToTheFirst() {
        let hook = PlayerMatch.Candidate(player: PlayerID("hook:3"), pid: 200)
        #expect(PlayerMatch.player(lineages: [[200]], appIDs: [], among: [Self.mpv, hook]) == Self.mpv.player)
        #expect(PlayerMatch.player(lineages: [[200]], appIDs: [], among: [hook]) == hook.player)
    }

    @Test("a sandboxed stream is matched by app id when no pid fits (its player's pid is the D-Bus proxy's)")
    func flatpakAppIDs() {
        let properties: Properties = ["application.process.id": "2", "pipewire.access.portal.app_id": "org.gnome.Lollypop"]
        let lineages = PlayerMatch.pids(in: properties).map { [$0] }
        let ids = PlayerMatch.appIDs(in: properties)
        #expect(PlayerMatch.player(lineages: lineages, appIDs: ids, among: [Self.mpv, Self.lollypop]) == Self.lollypop.player)
        #expect(PlayerMatch.player(lineages: lineages, appIDs: [], among: [Self.mpv, Self.lollypop]) == nil)
    }

    @Test("stream pids come from libpulse's and PipeWire's keys, without repeats or junk")
    func streamPids() {
        #expect(PlayerMatch.pids(in: ["application.process.id": "12", "pipewire.sec.pid": "34"]) == [12, 34])
        #expect(PlayerMatch.pids(in: ["application.process.id": "12", "pipewire.sec.pid": "12"]) == [12])
        #expect(PlayerMatch.pids(in: ["application.process.id": "x", "pipewire.sec.pid": "-1"]) == [])
    }
}

@Suite("MPRIS pure parts: D-Bus messages and event lines")
struct MPRISMessageTests {
    static let metadata = BusValue.properties([
        "mpris:trackid": .objectPath("/org/mpv/Track/0"),
        "mpris:length": .int64(30_000_000),
        "xesam:title": .string("Ünïcode — title"),
        "xesam:artist": .strings(["A", "B"]),
        "xesam:genre": .strings([]),
        "xesam:useCount": .int32(-3),
        "xesam:userRating": .double(0.5),
        "nested": .variant(.variant(.boolean(true))),
    ])

    @Test("values survive libdbus's marshalling: variants, a{sv}, arrays (empty ones too), structs, every basic type")
    func roundTrip() throws {
        let values: [BusValue] = [
            .string("org.mpris.MediaPlayer2.Player"), Self.metadata, .strings([]),
            .array(element: "ai", [.array(element: "i", [.int32(1), .int32(2)]), .array(element: "i", [])]),
            .structure([.byte(7), .uint16(65535), .int16(-2), .uint32(4_000_000_000), .uint64(UInt64.max),
                        .int64(Int64.min), .signature("a{sv}")]),
            .dictionary(key: "u", value: "as", [BusEntry(key: .uint32(1), value: .strings(["x"]))]),
            .boolean(false),
        ]
        let message = try BusMessage.methodCall(destination: "org.example.Test", path: "/org/example", interface: "org.example.Test",
                                                method: "Check")
        try message.append(values)
        #expect(message.argumentSignature == values.map(\.signature).joined())
        #expect(message.arguments() == values)
    }

    @Test("reading helpers see through variants")
    func helpers() throws {
        let message = try BusMessage.signal(path: "/org/mpris/MediaPlayer2", interface: "org.freedesktop.DBus.Properties",
                                            name: "PropertiesChanged")
        try message.append(.string("org.mpris.MediaPlayer2.Player"), .properties(["Metadata": Self.metadata,
                                                                                  "PlaybackStatus": .string("Paused")]),
                           .strings(["Position"]))
        let arguments = message.arguments()
        let changed = try #require(arguments[1].stringDictionary)
        #expect(changed["PlaybackStatus"]?.string == "Paused")
        let metadata = try #require(changed["Metadata"]?.stringDictionary)
        #expect(metadata["xesam:artist"]?.strings == ["A", "B"])
        #expect(metadata["mpris:length"]?.integer == 30_000_000)
        #expect(metadata["nested"]?.bool == true)
        #expect(arguments[2].strings == ["Position"])
        var player = MPRISPlayer(busName: "org.mpris.MediaPlayer2.mpv", owner: ":1.5")
        let changedOnce = player.apply(changed)
        #expect(changedOnce)
        #expect(player.status == .paused && player.artist == "A, B" && player.shortName == "mpv")
        let changedAgain = player.apply(changed)
        #expect(!changedAgain, "the same properties again are no change")
    }

    @Test("names and values libdbus would abort on are refused with an error instead")
    func invalidNamesThrow() throws {
        #expect(throws: BusError.self) { try BusMessage.methodCall(destination: "not a bus name", path: "/x", interface: nil, method: "M") }
        #expect(throws: BusError.self) { try BusMessage.methodCall(destination: nil, path: "no/slash", interface: nil, method: "M") }
        #expect(throws: BusError.self) { try BusMessage.methodCall(destination: nil, path: "/x", interface: "nodots", method: "M") }
        #expect(throws: BusError.self) { try BusMessage.signal(path: "/x", interface: "a.b", name: "bad-member") }
        let message = try BusMessage.methodCall(destination: nil, path: "/x", interface: nil, method: "M")
        #expect(throws: BusError.self) { try message.append(.objectPath("not/a/path")) }
        #expect(throws: BusError.self) { try message.append(.array(element: "s", [.int32(1)])) }
        #expect(throws: BusError.self) { try message.append(.unsupported("h")) }
        #expect(message.arguments().isEmpty, "a refused value must leave nothing half-written")
    }

    @Test("event lines: a now-playing event with no owner says null; pause requests carry the stream index")
    func eventJSON() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let none = String(decoding: try encoder.encode(ControlEvent(event: .nowPlaying)), as: UTF8.self)
        #expect(none == #"{"event":"now-playing","nowPlaying":null}"#)
        let pause = String(decoding: try encoder.encode(ControlEvent(event: .pause, index: 12, token: "claim-3")), as: UTF8.self)
        #expect(pause == #"{"event":"pause","index":12,"token":"claim-3"}"#)
        let decoded = try JSONDecoder().decode(ControlEvent.self, from: Data(pause.utf8))
        #expect(decoded == ControlEvent(event: .pause, index: 12, token: "claim-3"))
    }
}
