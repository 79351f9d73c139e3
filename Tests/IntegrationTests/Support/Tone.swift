import Foundation

/// A generated test sound: a sine tone, written once per test process with sox.
///
/// Music plays in the 300–600 Hz band that ``Levels`` measures; everything else (prompts, calls, a
/// second music app) plays well outside it, so the music's own level can be measured while they play.
struct Tone: Sendable {
    var name: String
    var frequency: Int
    var seconds: Double
    /// Peak amplitude (1 = 0 dBFS); 0 writes digital silence.
    var amplitude = 0.4

    /// The music being interrupted. Long enough to outlive any test (each test stops it).
    static let music = Tone(name: "music", frequency: 440, seconds: 30)
    /// Another music app's music, outside the measured band.
    static let otherMusic = Tone(name: "other-music", frequency: 1200, seconds: 30)
    /// A turn-by-turn prompt: long enough to measure the music while it plays.
    static let prompt = Tone(name: "prompt", frequency: 2000, seconds: 2.5)
    /// A call, or any interruption the test ends itself.
    static let long = Tone(name: "long", frequency: 2000, seconds: 30)
    /// A stream that is open and silent (as a web page's idle AudioContext is).
    static let silence = Tone(name: "silence", frequency: 440, seconds: 30, amplitude: 0)
    /// A chat beep.
    static let beep = Tone(name: "beep", frequency: 2000, seconds: 0.3)

    /// The band the music is measured in.
    static let musicBand = 300...600
    /// The band prompts and calls are heard in.
    static let promptBand = 1800...2200

    /// The WAV file (48 kHz, stereo, 16 bit; 10 ms fades so the ends do not click into other bands).
    func file() throws -> URL {
        let url = TestEnvironment.scratch.appendingPathComponent("\(name)-\(frequency)Hz-\(seconds)s-\(amplitude).wav")
        if !FileManager.default.fileExists(atPath: url.path) {
            let partial = url.deletingPathExtension().appendingPathExtension("partial.wav")
            try run("sox", "-n", "-r", "48000", "-c", "2", "-b", "16", partial.path,
                    "synth", String(seconds), "sine", String(frequency), "vol", String(amplitude),
                    "fade", "0.01", String(seconds), "0.01")
            try? FileManager.default.moveItem(at: partial, to: url)
        }
        return url
    }
}
