import AudioPolicy
import Testing

/// ``LevelOwnership``: the streams present at a connection started before anything the new run writes,
/// so they are judged against what an earlier run left saved, whatever the new run writes while it hears
/// them one by one (found by the 120 s churn on both servers).
@Suite("Levels: the streams present at a connection")
struct PresentStreamsTests {
    static let music = "sink-input-by-media-role:music"
    static let own = ChannelVolumes(values: [52429, 39322])
    static let silence = ChannelVolumes(values: [0, 0])

    /// A dead run faded stream 10 out and muted it (its mark: streams above 12 started later). Stream 13
    /// started while no daemon ran, with that mute. The new run hears 10 first: recovery puts it back,
    /// and the call still on fades it again (a step saves its unmuted state as the key's); the user mutes
    /// stream 12, and the run mutes stream 11 at once. Then it hears 13.
    func ownership(saving: ServerSaving) -> LevelOwnership {
        var ownership = LevelOwnership()
        ownership.connected(saving: saving, server: 1)
        let faded = WrittenStream(index: 10, key: Self.music, own: Self.own, muted: true, policyMuted: true,
                                  duckLevels: [], savedMute: SavedMuteMark(above: 12, server: 1), server: 1,
                                  muteSaved: true)
        ownership.recovered([faded], present: [10: true, 11: false, 13: true], now: 1_000)
        ownership.recoveryUnmuted(10, key: Self.music, now: 1_000)
        ownership.wroteOwnLevel(to: 10, key: Self.music, heldMuted: false, usersMute: false, recovery: true, now: 1_000)
        _ = ownership.wrote(Self.own.scaled(by: 0.5), to: 10, key: Self.music, own: Self.own, policyMuted: false,
                            muted: false, now: 2_000)
        ownership.theyMuted(12, key: Self.music, muted: true)
        ownership.wroteMute(true, to: 11, key: Self.music, now: 3_000)
        return ownership
    }

    @Test("a stream present at the connection with the dead run's mute is muted by us, whatever the new run wrote before hearing it",
          arguments: ServerSaving.allCases)
    func presentStreamKeepsTheDeadRunsMute(saving: ServerSaving) throws {
        let ownership = ownership(saving: saving)
        let origin = try #require(ownership.origin(of: 13, key: Self.music, volume: Self.silence, muted: true,
                                                   volumeKnown: true, now: 4_000))
        #expect(origin.mutedByUs, "the dead run's fade-out and mute, given to a stream that started while no daemon ran")
    }

    /// Control: the same stream heard as a new one, once the present ones are judged, starts after this
    /// run's writes: with the mute of stream 11 on its way (a mute of ours over the user's, a moment ago),
    /// the mute it has is the one saved before that write, the user's, not ours. (Over a saved unmute, a
    /// muted start at silence could have only ours.)
    @Test("control: the same start, heard after the present streams were judged, overtakes this run's mute and has the one before it",
          arguments: ServerSaving.allCases)
    func newStreamAfterTheJudging(saving: ServerSaving) throws {
        var ownership = ownership(saving: saving)
        _ = ownership.streamsJudged()
        let origin = try #require(ownership.origin(of: 13, key: Self.music, volume: Self.silence, muted: true,
                                                   volumeKnown: true, now: 4_000))
        #expect(!origin.mutedByUs)
    }
}
