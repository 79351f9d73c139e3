/// The name that tells which app a stream belongs to, skipping names that identify no app.
///
/// Electron apps call themselves `Chromium`, libwebrtc's call engine `WEBRTC VoiceEngine`, SDL games
/// `SDL Application`, Proton nothing at all, and an ALSA app through the pulse plugin
/// `ALSA plug-in [binary]`. Taken as identities, two different apps with one such name would count as
/// one app (which never interrupts itself) and share Now Playing.
public enum AppName {
    /// Lower-cased names that identify no app (`../shared/REAL-APPS.md`).
    static let generic: Set<String> = [
        "", "chromium", "chromium input", "google chrome", "google chrome input", "electron",
        "webrtc voiceengine", "zoom voiceengine", "sdl application", "wine64-preloader", "wine-preloader",
        "libcanberra", "openal soft", "playback",
    ]

    /// The application name, else the binary, whichever first says who the app is; nil when neither does.
    static func meaningful(in properties: Properties) -> String? {
        if let name = properties["application.name"] {
            if name.hasPrefix("ALSA plug-in ["), name.hasSuffix("]") {
                let inner = String(name.dropFirst("ALSA plug-in [".count).dropLast())
                if !isGeneric(inner) { return inner }
            } else if !isGeneric(name) {
                return name
            }
        }
        if let binary = properties["application.process.binary"], !isGeneric(binary) { return binary }
        return nil
    }

    /// A name for people, the one rule every part shows (status, Now Playing, decisions): the meaningful
    /// name, else whatever name or binary the stream has, else its id.
    public static func forPeople(_ properties: Properties, id: StreamID) -> String {
        meaningful(in: properties) ?? properties["application.name"] ?? properties["application.process.binary"]
            ?? id.rawValue
    }

    static func isGeneric(_ name: String) -> Bool {
        generic.contains(name.lowercased())
    }
}
