import AudioPolicy
@testable import AudioPolicyDaemon
import Foundation
import SoundBackend
import Testing

/// When publication publishes a batch (``Publication/published(_:)``): with nobody subscribed, on the
/// next turn of the loop, after the requests the batch led to have left; at once for a subscriber; and
/// whatever waits before `status` answers.
@Suite("Publication: after the requests, unless someone subscribes", .serialized)
struct PublicationTests {
    /// How the batch of a prompt's first duck is published, in each case.
    enum Case: String, CaseIterable, CustomTestStringConvertible {
        /// Nobody subscribed: `status` is asked in the turn of the loop that sent the duck.
        case statusAtOnce
        /// Nobody subscribed, nobody asks: the loop's next turn publishes it.
        case nextTurn
        /// Control: a connection subscribed to decisions: published in the same turn as the duck.
        case subscribed

        var testDescription: String { rawValue }
    }

    let scratch: ScratchDirectory
    let server = FakeSoundServer()

    init() throws {
        scratch = try ScratchDirectory()
    }

    @Test("a prompt's duck leaves before its decisions are published while nobody subscribes; status publishes what waits first; the next turn publishes it anyway (control: a subscriber's batch goes at once)",
          arguments: Case.allCases)
    func publishedAfterTheRequests(_ publishing: Case) throws {
        let music = server.addStream(role: "music", application: "Music", volume: [52428, 45875])
        let daemon = try DaemonOnFake(server: server, directory: scratch.url)
        try #require(daemon.run(until: { daemon.isReady }), "the daemon never became ready")
        // The music has played a moment (a stream that starts under a prompt is ducked at once).
        daemon.run(for: 0.2)
        let publication = daemon.daemon.publication
        // No such connection: its lines go nowhere, but it is a subscriber.
        if publishing == .subscribed { publication.subscribe(999, to: [.decision]) }
        server.addStream(role: "navigation", application: "Navigator", volume: [65536, 65536])
        let ducking = daemon.run(until: {
            server.writes.contains { if case .volume(music, _) = $0 { true } else { false } }
        })
        try #require(ducking, "the music was never written: \(server.writes)")

        // The turn of the loop that sent the first duck write has ended.
        switch publishing {
        case .statusAtOnce:
            #expect(publication.waitingBatches > 0, "published in the turn that sent the duck")
            let decisions = publication.status(server: nil).decisions ?? []
            #expect(decisions.contains { $0.stream == "\(music)" && $0.action.hasPrefix("ducked to") }, "\(decisions)")
            #expect(publication.waitingBatches == 0)
        case .nextTurn:
            #expect(publication.waitingBatches > 0, "published in the turn that sent the duck")
            #expect(daemon.run(until: { publication.waitingBatches == 0 }, timeout: 1), "never published")
        case .subscribed:
            #expect(publication.waitingBatches == 0, "a subscriber's batch waited")
        }
    }
}
