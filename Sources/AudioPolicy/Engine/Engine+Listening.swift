/// Apps that listen: a microphone capture that a rule names (`capture = "yes"` in its match) is an
/// interruption of the rule's class for as long as it records, as a hook's would be — a `short` class
/// ducks the media it is above, a `call` class pauses it and resumes it after. Dictation and voice
/// assistants hear the music they record over, and people ask for it lowered while they speak; OBS and
/// voice chat record with music on purpose, so only a rule makes a capture interrupt.
///
/// The interruption holds only while the capture's app plays nothing: an app that records and plays is a
/// call, and its playback's own class (`recording = "yes"`) says what happens.
extension Engine {
    /// Classifies the capture `id` from the rules in force and starts, ends or changes its interruption to
    /// match (at its start, and on a policy reload).
    mutating func listen(_ id: StreamID, now: Milliseconds, into out: inout [Command]) {
        guard let capture = captures[id] else { return }
        var properties = capture.properties
        properties["recording"] = "yes"
        let classification = policy.classifyCapture(properties).flatMap { found in
            let kind = found.interruptionClass.kind
            return kind == .short || kind == .call ? found : nil
        }
        let current = streams[id].flatMap { $0.isLive ? $0 : nil }
        guard current?.classification != classification else { return }
        if current != nil { end(id, now: now, into: &out) }
        guard let classification else { return }
        start(id, properties: capture.properties, player: nil, hook: classification, playing: true, muted: false,
              now: now, into: &out)
    }

    /// The capture `id` stopped recording: its interruption ends (what it ducked comes back after its
    /// class's hold, what it paused is resumed).
    mutating func stopListening(_ id: StreamID, now: Milliseconds, into out: inout [Command]) {
        guard let stream = streams[id], stream.isLive, stream.isHook else { return }
        end(id, now: now, into: &out)
        out.append(.decision(decision(stream, reason: "its capture ended", action: "no longer listens")))
    }

    /// Whether `stream` is a capture's interruption held off because its app plays: it records and plays,
    /// a call, which its playback's class deals with.
    func isListeningWhilePlaying(_ stream: TrackedStream) -> Bool {
        guard stream.isHook, stream.isLive, captures[stream.id] != nil else { return false }
        return streams.values.contains { other in
            other.isLive && !other.isHook && other.playing && other.hasPlayed && other.app == stream.app
        }
    }
}
