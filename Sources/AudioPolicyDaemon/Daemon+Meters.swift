import AudioPolicy
import EventLoop
import Logging
import SoundServer

/// Measuring streams' sound and following microphones, for the engine.
extension Daemon {
    /// Starts or stops measuring a stream (``Command/measure(_:_:)``).
    func measure(_ index: UInt32, _ on: Bool) {
        guard on else { return meters.stop(index) }
        guard let pulse, let live = streams[index] else { return }
        if meters.start(index, sink: live.input.sinkIndex, on: pulse) {
            feedLater(.measuring(Self.streamID(index)))
        }
    }

    /// A meter's verdict, for the engine.
    func audibilityMeasured(_ index: UInt32, audible: Bool) {
        guard let live = streams[index] else { return }
        let peakAt = MainLoop.monotonicMicroseconds()
        let rampsBefore = ramps.startedCount
        feed(.audibility(Self.streamID(index), audible: audible))
        if recordReactionTimes, audible, ramps.startedCount != rampsBefore {
            audibilityReactionTimes.append(ReactionTime(announced: live.seenAt, described: peakAt,
                                                        acted: MainLoop.monotonicMicroseconds()))
        }
    }

    // MARK: - Microphones

    static func captureID(_ index: UInt32) -> StreamID { StreamID("capture-\(index)") }

    /// A capture stream appeared or changed. It counts as an app recording from a microphone while it is
    /// uncorked and records from a real source: not a monitor (that records what plays), not a meter
    /// (pavucontrol's or ours).
    func captureChanged(_ capture: SourceOutput) {
        let recording = !capture.isMonitor && !capture.isPeakDetect && !capture.isOwnMeter && !capture.corked
        guard recording != recordingCaptures.contains(capture.index) else { return }
        let id = Self.captureID(capture.index)
        if recording {
            recordingCaptures.insert(capture.index)
            log.info("capture \(capture.index) (\(capture.applicationName ?? "?")): recording from a microphone")
            feed(.captureStarted(id, capture.properties))
        } else {
            recordingCaptures.remove(capture.index)
            log.info("capture \(capture.index): no longer recording")
            feed(.captureEnded(id))
        }
    }

    func captureRemoved(_ index: UInt32) {
        guard recordingCaptures.remove(index) != nil else { return }
        log.info("capture \(index): ended")
        feed(.captureEnded(Self.captureID(index)))
    }
}
