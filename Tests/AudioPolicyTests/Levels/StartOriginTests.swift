import AudioPolicy
import Testing

/// ``StartOrigin/usersMute(startedMuted:mutedByUs:held:)``: whose a new stream's mute is, the rule the
/// daemon and the rehearsal share.
@Suite("Start origin: whose a start's mute is")
struct StartOriginTests {
    @Test("a start's mute is its user's only when it is neither our saved mute nor a held one",
          arguments: [
              // started muted, our saved mute, held by an earlier run → its user's
              (false, false, false, false),
              (true, false, false, true),
              (true, true, false, false),
              (true, false, true, false),
              (true, true, true, false),
              (false, true, false, false),
          ])
    func usersMute(_ row: (startedMuted: Bool, mutedByUs: Bool, held: Bool, users: Bool)) {
        #expect(StartOrigin.usersMute(startedMuted: row.startedMuted, mutedByUs: row.mutedByUs, held: row.held)
                == row.users)
    }
}
