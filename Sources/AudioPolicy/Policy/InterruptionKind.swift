/// What a class of audio does to the streams it outranks — the Android audio-focus request kinds.
public enum InterruptionKind: String, Sendable, CaseIterable, Codable {
    /// Media playback (music, video, podcasts): pauses the streams it outranks indefinitely (after the
    /// grace time), and takes Now Playing. Like `AUDIOFOCUS_GAIN`.
    case primary
    /// Phone and video calls: pauses the streams it outranks while it lasts, then resumes what the
    /// engine paused. Like `AUDIOFOCUS_GAIN_TRANSIENT`.
    case call
    /// Navigation prompts, notifications, TTS, screen readers: ducks the streams it outranks while it
    /// lasts (spoken streams are paused instead), then restores them. Like `GAIN_TRANSIENT_MAY_DUCK`.
    case short
    /// Plays along with everything: games, web games, long sounds that are not media playback. It
    /// interrupts nobody and never takes Now Playing, but the classes that list it in `above` act on it
    /// (prompts duck it, a call mutes it). Like iOS's Ambient category: no platform lets a game's sound
    /// stop the user's music.
    case ambient
    /// Never interrupts and is never interrupted (DAW / production audio, test tones).
    case mix
}
