import Testing
@testable import AudioPolicy

/// A focus source's identity reads back from its text (fixtures, `record`), and finds a window's app by
/// pid first, by name only when no stream has the pid.
@Suite struct AppIdentityTests {
    @Test(arguments: [
        ("2002", AppIdentity(pid: 2002)),
        ("mpv", AppIdentity(name: "mpv")),
        ("2002 (mpv)", AppIdentity(pid: 2002, name: "mpv")),
        ("wine (x)", AppIdentity(name: "wine (x)")),
    ])
    func parsesItsDescription(_ text: String, _ identity: AppIdentity) {
        #expect(AppIdentity(parsing: text) == identity)
        #expect(AppIdentity(parsing: identity.description) == identity)
    }

    @Test func rejectsNothing() {
        #expect(AppIdentity(parsing: "") == nil)
        #expect(AppIdentity(parsing: "0") == AppIdentity(name: "0"))
    }

    @Test func focusEventsRoundTripThroughFixtureWords() throws {
        for event: Event in [.focus(AppIdentity(pid: 5, name: "game")), .focus(nil), .windowClosed(AppIdentity(pid: 5)),
                             .lastWindowClosed(AppIdentity(pid: 5, name: "mpv")), .focusUnknown] {
            let words = try #require(FixtureEvent(event))
            let text = "[[event]]\nat = 0\n" + words.tomlLines.joined(separator: "\n") + "\n"
            let fixture = try FixtureLoader.load(text: text, file: "f.toml")
            guard case let .event(read)? = fixture.steps.first?.action else {
                Issue.record("no event read from \(text)")
                continue
            }
            #expect(read == event)
        }
    }

    @Test func processBeforeName() {
        let identity = AppIdentity(pid: 7, name: "MPV")
        #expect(identity.hasProcess(of: ["application.process.id": "7"]))
        #expect(!identity.hasProcess(of: ["application.process.id": "8"]))
        #expect(identity.isNamed(in: ["application.process.binary": "mpv"]))
        #expect(!AppIdentity(pid: 7).isNamed(in: ["application.process.binary": "mpv"]))
    }
}
