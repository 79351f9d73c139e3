import AudioPolicy
import Foundation
import Testing
import TestRequirements

// Games nobody here wrote, next to mpv's music with MPRIS: SDL2's `loopwave` (what SDL games play
// through) and OpenAL Soft's `alurestream` (what OpenAL games play through), each playing a long tone
// outside the music's band. Only media pauses media: a game has no media player, no media role and no
// media player's name, so it is `ambient` — it plays along with the music, which keeps playing at its
// level and keeps Now Playing — and a navigation prompt ducks both. The control: the same game made
// primary by a rule of the user's, first in a policy that is otherwise the default, pauses the music.
//
// What the servers show of them (Debian bookworm: SDL 2.26.5, OpenAL Soft 1.19.1, alure 1.2; see
// Tests/RealApps/FACTS.md): SDL uses its pulseaudio driver on both servers (it comes first in its list),
// `application.name` = `application.process.binary` = "loopwave", no role. alurestream:
// "alurestream" for both, and a `media.role` that is no string on PulseAudio (`hex:`, empty) and
// garbage on pipewire-pulse ("tphonon.streamid").

/// A game's audio library and the program that stands for a game using it.
struct GameCase: Sendable, CustomTestStringConvertible {
    var library: String
    /// The program's name: what the opt-in rule matches (`app`: name, binary, app ids).
    var app: String

    var testDescription: String { "\(library) (\(app))" }

    static let sdl = GameCase(library: "SDL2", app: "loopwave")
    static let openAL = GameCase(library: "OpenAL", app: "alurestream")

    func start() throws -> RealApp {
        let file = try Tone.game.file()
        return app == "loopwave" ? try RealApp.sdlGame(playing: file) : try RealApp.openALGame(playing: file)
    }

    /// The game's stream: its binary, or its name (SDL's native PipeWire driver, were it chosen, names
    /// its node "SDL Application" and puts the binary on the client only).
    func matches(_ properties: [String: String]) -> Bool {
        properties["application.process.binary"] == app || properties["application.name"] == app
            || (app == "loopwave" && properties["application.name"] == "SDL Application")
    }
}

extension Tone {
    /// A game's soundtrack (and a web game's): long, in a band of its own.
    static let game = Tone(name: "game", frequency: 1000, seconds: 30)
    /// The band the game is heard in: apart from the music's and the prompts'.
    static let gameBand = 900...1100
}

extension MPRISTests {
    @Test("a game (SDL2, OpenAL) is ambient: the music keeps playing at its level and keeps Now Playing; a navigation prompt ducks both, and both come back exactly",
          .needs(RealApp.gamesMissing),
          arguments: [GameCase.sdl, .openAL])
    func gameMixesWithMusic(_ game: GameCase) throws {
        let (daemon, mpv, own, before) = try musicUnderDaemon()
        let app = try game.start()
        let stream = try awaitGameStream(app, game)
        let gameOwn = stream.volume
        try awaitClass(daemon, stream.index, "ambient")

        // Heard for twice a primary's grace: the music still plays, untouched, and owns Now Playing.
        try expectStays(mpv, "Playing", for: 3, "a game must not pause the music")
        let during = try record()
        let music = try during.level(Tone.musicBand)
        #expect(abs(music - before) < 0.5, "music at \(before) dB alone, \(music) dB with \(game.app)")
        #expect(try during.level(Tone.gameBand) > -30, "\(game.app) stopped playing")
        let now = try mpv.stream()
        #expect(DaemonTests.matches(now.volume, own) && !now.muted, "the music was changed: \(now)")
        var status = try daemon.status()
        #expect(status.nowPlaying?.player == mpv.busName,
                "Now Playing went to \(status.nowPlaying?.application ?? "nobody"): \(DaemonTests.describe(status))")
        #expect(status.streams.first { $0.index == stream.index }?.class == "ambient", "\(DaemonTests.describe(status))")
        let gameNow = try #require(try SoundServer.stream(stream.index), "\(game.app)'s stream is gone")
        #expect(DaemonTests.matches(gameNow.volume, gameOwn) && !gameNow.muted, "the game was changed: \(gameNow)")

        // A navigation prompt ducks both to -20 dB of their own, then both come back exactly.
        let prompt = try play(.prompt, role: "navigation", name: "navigation-app")
        let promptIndex = try #require(prompt.index)
        try awaitClass(daemon, promptIndex, "navigation")
        let musicDucked = DaemonTests.volume(own, at: -20)
        try awaitStream(mpv, "ducked to \(musicDucked) under the prompt") { DaemonTests.matches($0.volume, musicDucked) }
        let gameDucked = DaemonTests.volume(gameOwn, at: -20)
        try awaitGameStream(stream.index, "ducked to \(gameDucked) under the prompt") { DaemonTests.matches($0.volume, gameDucked) }
        #expect(try SoundServer.stream(promptIndex) != nil, "the prompt ended before both were ducked")
        #expect(try mpv.status() == "Playing", "a prompt ducks the music; it does not pause it")
        try events.awaitRemoval(of: promptIndex, timeout: 10)
        try awaitMusicRestored(mpv, to: own)
        try awaitGameStream(stream.index, "back at \(gameOwn), unmuted", timeout: 10) {
            DaemonTests.matches($0.volume, gameOwn) && !$0.muted
        }
        #expect(try mpv.status() == "Playing")
        status = try daemon.status()
        #expect(status.nowPlaying?.player == mpv.busName, "the prompt moved Now Playing: \(DaemonTests.describe(status))")
        let after = try record().level(Tone.musicBand)
        #expect(abs(after - before) < 0.5, "music at \(before) dB alone, \(after) dB after the prompt")
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
        app.stop()
    }

    @Test("a game made primary by a rule of the user's pauses the music for good and takes Now Playing (the control of the game that plays along)",
          .needs(RealApp.gamesMissing),
          arguments: [GameCase.sdl, .openAL])
    func optedInGamePausesMusic(_ game: GameCase) throws {
        let folder = try TestEnvironment.temporaryFolder("audio-policyd-policy")
        defer { try? FileManager.default.removeItem(at: folder) }
        let policy = folder.appendingPathComponent("policy.toml")
        // The rule first (first match wins), then the default policy as it is.
        let rule = """
            [[rule]]
            name = "this game pauses my music"
            match = { app = "\(game.app)" }
            class = "primary"


            """
        try (rule + String(contentsOf: TestEnvironment.defaultPolicy, encoding: .utf8))
            .write(to: policy, atomically: true, encoding: .utf8)

        let (daemon, mpv, _, _) = try musicUnderDaemon(policy: policy.path)
        let app = try game.start()
        let stream = try awaitGameStream(app, game)
        let status = try awaitClass(daemon, stream.index, "primary")
        let row = status.streams.first { $0.index == stream.index }
        #expect(row?.rule.contains("this game pauses my music") == true, "\(String(describing: row))")
        try awaitPlayer(mpv, "Paused", timeout: 10, daemon)
        try awaitStatus(daemon, "\(game.app) to own Now Playing", timeout: 5) { $0.nowPlaying?.index == stream.index }
        app.stop()
        try events.awaitRemoval(of: stream.index, timeout: 10)
        try expectStays(mpv, "Paused", for: 2, "the game paused it for good")
        #expect(daemon.problems.isEmpty, "\(daemon.problems)")
    }

    // MARK: - The game's stream

    /// The game's stream once its sound comes out. OpenAL Soft opens a stream when it opens the device
    /// and removes it within milliseconds, before it opens the one it plays on; so the first stream seen
    /// may be gone, and the one that counts is the one there when the game is heard.
    private func awaitGameStream(_ app: RealApp, _ game: GameCase) throws -> ServerStream {
        _ = try app.awaitStream(changes: changes, timeout: 10, game.matches)
        try awaitHeard(Tone.gameBand, game.app)
        let streams = try SoundServer.streams().filter { game.matches($0.properties) }
        guard streams.count == 1, let stream = streams.first else {
            throw CommandFailure(description: "\(game.app) is heard, and has \(streams.count) streams: \(streams)")
        }
        return stream
    }

    @discardableResult
    private func awaitGameStream(_ index: UInt32, _ what: String, timeout: Double = 5,
                                 _ condition: (ServerStream) throws -> Bool) throws -> ServerStream {
        try changes.await("the game's stream \(index): \(what)", timeout: timeout) { () throws -> Probe<ServerStream> in
            guard let now = try SoundServer.stream(index) else {
                throw CommandFailure(description: "the game's stream \(index) is gone")
            }
            return try condition(now) ? .done(now) : .waiting("\(now)")
        }
    }
}
