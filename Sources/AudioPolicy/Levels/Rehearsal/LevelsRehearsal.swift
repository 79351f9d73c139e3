/// Plays a ``LevelsScenario``: the daemon's levels stage (``RehearsedDaemon``) against a pure server
/// that saves levels (``SavingServer``), on a virtual clock, checking its expectations.
///
/// The same world carries the property run (LevelsPropertyTests), which adds the invariants: a stream's
/// own level as the daemon takes it is always its user's, and once everything is over no saved entry
/// holds a level or mute of ours.
public struct LevelsRehearsal: Sendable {
    public private(set) var server: SavingServer
    public private(set) var daemon = RehearsedDaemon()
    /// Stream names to their index on the server instance they started on (gone after a restart).
    public private(set) var indexes: [String: UInt32] = [:]

    /// Streams the server started at silence (a fade-out's end saved for their key).
    public private(set) var silentStarts: Set<UInt32> = []

    /// Tolerance on levels (linear, per channel).
    public static let tolerance = 0.01

    public init(saving: ServerSaving, entries: [(key: String, level: ChannelVolumes, muted: Bool)] = [],
                control: Bool = false) {
        server = SavingServer(saving: saving)
        daemon.takesStartMutesForTheUsers = control
        for entry in entries {
            // Saved long before: stored by a server that stores only what held a while.
            server.writeEntry(entry.key, volume: entry.level, muted: entry.muted, for: nil, at: -SavingServer.settleTime)
        }
        daemon.connect(to: &server, at: 0)
    }

    /// Plays `scenario`; returns every expectation that did not hold.
    public static func run(_ scenario: LevelsScenario) -> [FixtureRunner.Failure] {
        var rehearsal = LevelsRehearsal(saving: scenario.saving, entries: scenario.entries)
        var failures: [FixtureRunner.Failure] = []
        for step in scenario.steps {
            failures += rehearsal.play(step.action, at: step.at, location: step.location)
        }
        return failures
    }

    /// Whether the server started stream `index` at silence, as it is now.
    private mutating func noteSilence(of index: UInt32) {
        if server.streams[index]?.volume.values.allSatisfy({ $0 == 0 }) == true {
            silentStarts.insert(index)
        } else {
            silentStarts.remove(index)
        }
    }

    /// Does one step; an expectation returns what did not hold.
    public mutating func play(_ action: LevelsScenario.Action, at now: Milliseconds,
                              location: SourceLocation = SourceLocation(file: "", line: 0, column: 0))
        -> [FixtureRunner.Failure] {
        // The read that an ended stream's repair waits on is answered before the next step, unless that
        // step kills the daemon or restarts the server in the same millisecond (the round trip is then
        // lost with it).
        switch action {
        case .killDaemon, .restartServer: daemon.savedEntriesRead(on: &server, before: now)
        default: daemon.savedEntriesRead(on: &server)
        }
        // Whatever comes next comes after the server's reports of the daemon's last writes, except a
        // start that overtakes them.
        if case .start(_, _, _, _, _, _, _, true) = action {
            // Applied, not yet reported: nothing of them reaches the daemon before the start.
        } else {
            if case .start(_, _, _, _, true, _, _, _) = action {
                server.writesReported(sentBefore: now - SavingServer.writeInFlight)
            } else {
                server.writesReported()
            }
            daemon.snapshotsArrive(from: server)
            daemon.serverAnswered(writesSentBefore: now - SavingServer.writeInFlight)
        }
        switch action {
        case let .start(name, key, level, muted, beforeWritesApplied, volumeLate, killedAsItStarts, _):
            let index = server.start(key: key, appLevel: level, appMuted: muted,
                                     beforeWritesApplied: beforeWritesApplied, at: now)
            indexes[name] = index
            noteSilence(of: index)
            // Only pipewire-pulse tells a volume late.
            daemon.appeared(index, volumeLate: volumeLate && server.saving == .wirePlumber,
                            killedAsItStarts: killedAsItStarts, on: &server, at: now)
        case let .volumeArrives(name, restoredNow):
            // Told once: a volume that came with an earlier change (``arriveFirst(_:at:)``) was restored then.
            if let index = live(name), daemon.live[index]?.volumePending == true {
                if restoredNow {
                    server.restoreNow(index, at: now)
                    noteSilence(of: index)
                }
                daemon.volumeArrived(index, on: &server, at: now)
            }
        case let .ramp(name, to, steps):
            if let index = live(name) { daemon.ramp(index, to: to, steps: steps, on: &server, at: now) }
        case let .fadeOut(name):
            if let index = live(name) { daemon.fadeOut(index, on: &server, at: now) }
        case let .hold(name):
            if let index = live(name) { daemon.hold(index) }
        case let .unmute(name):
            if let index = live(name) { daemon.unmute(index, on: &server, at: now) }
        case let .userLevel(name, level):
            guard let index = live(name) else { break }
            arriveFirst(index, at: now)
            server.setVolume(index, level, byDaemon: false, at: now)
            daemon.userLevel(index, on: server)
        case let .userMute(name, muted):
            // Muting a muted stream changes nothing: the server tells no one.
            guard let index = live(name), server.streams[index]?.muted != muted else { break }
            arriveFirst(index, at: now)
            server.setMute(index, muted, byDaemon: false, at: now)
            daemon.userMuted(index, muted)
        case let .move(name):
            guard let index = live(name) else { break }
            arriveFirst(index, at: now)
            server.move(index, at: now)
            daemon.moved(index)
        case let .end(name, lastWriteLost):
            guard let index = live(name) else { break }
            server.end(index, lastWriteLost: lastWriteLost, at: now)
            indexes[name] = nil
            daemon.ended(index, on: &server, at: now)
        case .killDaemon:
            daemon.kill()
        case .startDaemon:
            if !daemon.alive { daemon.connect(to: &server, at: now) }
        case .restartServer:
            server.restart(at: now)
            indexes = [:]
            silentStarts = []
            if daemon.alive {
                daemon.serverGone()
                daemon.connect(to: &server, at: now)
            }
        case let .expectSaved(key, level, muted):
            let entry = server.entries[key]
            var failures: [FixtureRunner.Failure] = []
            if let level { failures += Self.compare("saved \(key) level", level, entry?.volume, location) }
            if let muted, entry?.muted != muted {
                failures.append(.init(location: location, subject: "saved \(key)", expected: "muted \(muted)",
                                      got: entry.map { "muted \($0.muted)" } ?? "no entry"))
            }
            return failures
        case let .expectStream(name, level, own, muted):
            guard let index = live(name), let stream = server.streams[index] else {
                return [.init(location: location, subject: "stream \(name)", expected: "live", got: "ended")]
            }
            var failures: [FixtureRunner.Failure] = []
            if let level { failures += Self.compare("stream \(name) level", level, stream.volume, location) }
            if let own { failures += Self.compare("stream \(name) own level", own, daemon.live[index]?.level.own, location) }
            if let muted, stream.muted != muted {
                failures.append(.init(location: location, subject: "stream \(name)", expected: "muted \(muted)",
                                      got: "muted \(stream.muted)"))
            }
            return failures
        }
        return []
    }

    /// Lets what the daemon has under way finish: the repairs of streams that ended at the last step are
    /// sent (``RehearsedDaemon/savedEntriesRead(on:before:)``).
    public mutating func settle() {
        daemon.savedEntriesRead(on: &server)
    }

    /// A change the server tells after a late volume it has not told yet tells that volume first
    /// (pipewire-pulse tells a new stream's volume within 100 ms; nobody acts on a stream that soon).
    private mutating func arriveFirst(_ index: UInt32, at now: Milliseconds) {
        if daemon.live[index]?.volumePending == true { daemon.volumeArrived(index, on: &server, at: now) }
    }

    private func live(_ name: String) -> UInt32? {
        indexes[name].flatMap { server.streams[$0] == nil ? nil : $0 }
    }

    static func compare(_ subject: String, _ expected: [Double], _ got: ChannelVolumes?,
                        _ location: SourceLocation) -> [FixtureRunner.Failure] {
        let linear = got?.linearValues ?? []
        let wanted = expected.count == 1 ? Array(repeating: expected[0], count: max(linear.count, 1)) : expected
        let held = linear.count == wanted.count && zip(linear, wanted).allSatisfy { abs($0 - $1) <= tolerance }
        guard !held else { return [] }
        return [.init(location: location, subject: subject, expected: Self.format(wanted),
                      got: got.map { Self.format($0.linearValues) } ?? "nothing")]
    }

    static func format(_ levels: [Double]) -> String {
        "[" + levels.map { "\(($0 * 1000).rounded() / 1000)" }.joined(separator: ", ") + "]"
    }
}
