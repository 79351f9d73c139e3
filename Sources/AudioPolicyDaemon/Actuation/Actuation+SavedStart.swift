import AudioPolicy
import EventLoop
import Logging
import SoundBackend

/// A new stream that the server started at a level it saved from one of our ducks or fades (see
/// ``SavedWrites``): its own level is the one that duck was taken from, not the duck.
extension Actuation {
    /// Notes a volume written to stream `index`, which the server may save for the stream's key.
    func noteWrite(_ index: UInt32, volume: ChannelVolumes) {
        guard let live = streams[index] else { return }
        if restore?.wrote(volume, to: live.input, own: live.level.own, policyMuted: live.level.policyMuted) == true {
            journalSavedMute(of: live.input.restoreID)
        }
    }

    /// Mutes or unmutes stream `index` for the policy: the server saves that as its key's mute, which
    /// the key's next stream may start with.
    func writeMute(_ index: UInt32, _ muted: Bool) {
        // An ended stream has nothing to mute (its ramps and requests end with it).
        guard let live = streams[index] else { return }
        // Held back until the server tells the stream's volume and mute (``LateVolume``).
        guard !live.input.volumePending else {
            log.debug("stream \(index): \(muted ? "mute" : "unmute") held back until its volume is told")
            return
        }
        restore?.wroteMute(muted, to: live.input)
        journalSavedMute(of: live.input.restoreID)
        log.debug("stream \(index): \(muted ? "muted" : "unmuted")")
        server?.setMute(live.id, muted: muted)
        if !muted {
            // Answered, an unmute is saved: a kill and its stream's end no longer lose it, and the journal's
            // marks of its key can say so (``LevelOwnership/writesAnswered(sentBefore:)``).
            let sent = MainLoop.monotonicMicroseconds() &+ 1
            server?.drain { [weak self] in self?.restore?.writesAnswered(sentBefore: sent) }
        }
    }

    /// Before the engine hears of a new stream (or, on pipewire-pulse, when its volume arrives): where
    /// its start came from, if the server gave it a level or mute we wrote for its key (its own level is
    /// then the one under that write, and its mute, if ours, is not the user's).
    func savedOrigin(_ index: UInt32) -> StartOrigin? {
        guard let live = streams[index], let origin = restore?.origin(of: live.input) else { return nil }
        let own = ChannelVolumes(values: origin.own.values, channelMap: live.input.volume.channelMap)
        let message = "stream \(index) (\(live.input.applicationName ?? "?")) started at \(live.input.volume)"
            + "\(origin.mutedByUs ? ", muted," : "") as the server saved it from our change of another stream of "
            + "\(live.input.restoreID ?? "?"); its own level is \(own)"
        log.info("\(message)")
        if live.input.muted, !origin.mutedByUs {
            log.debug("stream \(index): its mute is taken for its user's")
        }
        return StartOrigin(own: own, mutedByUs: origin.mutedByUs)
    }

    /// Puts a start at one of our saved levels or mutes right, as the engine says
    /// (``Command/putBack(_:level:unmute:)``): its own level written, its mute undone.
    func putBack(_ index: UInt32, level: Bool, unmute: Bool) {
        guard let live = streams[index], let server else { return }
        if level {
            server.setGain(live.id, own: live.level.own, factor: 1)
            // Its mute, unless ours and undone in the same batch, is its user's.
            if restore?.wroteOwnLevel(to: live.input, heldMuted: false, usersMute: !unmute && live.input.muted) == true {
                journalSavedMute(of: live.input.restoreID)
            }
        }
        if unmute { writeMute(index, false) }
        journalSync(index)
    }
}
