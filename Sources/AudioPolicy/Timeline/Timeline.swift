/// A fixture's replay as a picture's data: a lane per stream with its policy gain over time, the states
/// the policy put it in and why, the Now Playing owner, and where each expectation held or not.
///
/// When music went quiet a person would rather look than read: this is what ``TimelineSVG`` draws.
/// It is built from the one replay that also decides the verdict (``FixtureRunner/run(_:policy:observe:)``),
/// so the picture and `audio-policyd test` cannot disagree. Pure: no I/O, no clock.
public struct Timeline: Sendable {
    /// The fixture file.
    public var file: String
    /// The fixture's `description`, if any.
    public var title: String?
    /// Where the picture ends: the last step, or the end of a ramp still running then (ms).
    public var end: Milliseconds
    /// A lane per stream (and per hook interruption), in the order they first appeared.
    public var lanes: [Lane]
    /// Who owned Now Playing when; gaps are times nobody did.
    public var nowPlaying: [OwnerSegment]
    /// Every `[[expect]]`, at its time, in its lane (or the Now Playing row).
    public var marks: [Mark]
    /// The verdict, exactly as `audio-policyd test` reports it.
    public var result: FixtureRunner.Result

    /// Gains at or below this are drawn on the floor (the muted and silent bands say the rest).
    public static let floorDecibels = -40.0
    /// How often the gain is sampled between events, in ms: dense enough that a ramp's curve shows.
    /// Points that a straight line through their neighbours already gives are left out.
    public static let sampleInterval: Milliseconds = 10

    /// Replays `fixture` against `policy` (and its `reload`s' policies) and records what it shows.
    public static func replay(_ fixture: Fixture, policy: Policy, reloads: [String: Policy] = [:]) -> Timeline {
        var recorder = TimelineRecorder()
        let result = FixtureRunner(reloads: reloads).run(fixture, policy: policy) { engine, moment in
            recorder.observe(engine, moment)
        }
        return recorder.timeline(fixture: fixture, result: result)
    }

    /// A gain in decibels as drawn: the engine's factor, floored at ``floorDecibels``.
    public static func drawnDecibels(_ factor: Double) -> Double {
        max(floorDecibels, Level(linear: factor).decibels)
    }
}

extension Timeline {
    /// One stream's row: who it is, its gain over time, and the states it went through.
    public struct Lane: Sendable {
        public var stream: StreamID
        /// The application's name, as `status` shows it.
        public var application: String
        /// Its class; `a → b` when it was classified anew during the replay.
        public var className: String
        /// A hook's interruption: no sound of its own, so no gain to draw.
        public var isHook: Bool
        /// A microphone recording's interruption (a hook's lane, labelled as a capture).
        public var isCapture = false
        /// When it first appeared, and when it ended (nil: still there at the end).
        public var start: Milliseconds
        public var ended: Milliseconds?
        /// The policy gain over time, in time order; two samples at one time are a jump.
        public var samples: [Sample]
        /// What the policy did to it, and when its monitor said it was silent.
        public var bands: [Band]
    }

    /// The policy factor on a stream's volume at one time (1 = the user's own volume).
    public struct Sample: Hashable, Sendable {
        public var at: Double
        public var factor: Double
        public var decibels: Double { Timeline.drawnDecibels(factor) }
    }

    /// A stretch of time a stream spent in one state, and why.
    public struct Band: Hashable, Sendable {
        public enum Kind: String, Hashable, Sendable, CaseIterable {
            /// Playing, lowered by the policy.
            case ducked
            /// Paused, by the policy, its player or the user.
            case paused
            /// Held muted by the policy's fallback for a stream without a player.
            case muted
            /// Its monitor said it makes no sound (`silent`), until it said `audible` again.
            case silent
            /// A hook's interruption in force.
            case interrupting
            /// The output it was heard on went away (or its port was unplugged): muted while the switch
            /// window runs, then paused or held muted by the loss. Drawn as a strip along the lane's top.
            case outputLost
        }
        public var kind: Kind
        public var start: Milliseconds
        public var end: Milliseconds
        /// The engine's decision that began it (`interrupted by class navigation: ducked to …`), if any.
        public var reason: String?
    }

    /// Who owned Now Playing from `start` to `end`.
    public struct OwnerSegment: Hashable, Sendable {
        public var owner: StreamID
        public var start: Milliseconds
        public var end: Milliseconds
    }

    /// An `[[expect]]` as drawn: where, and whether it held.
    public struct Mark: Sendable {
        public var at: Milliseconds
        /// The stream it is about; nil for `now-playing`, drawn in the Now Playing row.
        public var stream: StreamID?
        /// Its lane, an index into ``Timeline/lanes`` (the stream's lane at that time); nil for `now-playing`.
        public var lane: Int?
        public var location: SourceLocation
        public var held: Bool
        /// What it asked, as written (`state ducked, volume 0.316`).
        public var expected: String
        /// For a failed one, what was found instead (`volume 0.5`).
        public var got: String?
        /// The `volume` it asked for, if any: the mark sits at that gain.
        public var volume: Double?
    }
}

/// Collects a ``Timeline`` from the moments of a replay.
struct TimelineRecorder {
    private var lanes: [Lane] = []
    private var laneIndex: [StreamID: Int] = [:]
    private var owners: [Timeline.OwnerSegment] = []
    private var owner: (id: StreamID, since: Milliseconds)?
    private var marks: [Timeline.Mark] = []
    /// The time up to which gains are sampled.
    private var sampledUpTo: Milliseconds = 0
    /// When the ramps started so far end: sample times that need not fall on the grid.
    private var rampEnds: Set<Milliseconds> = []
    private var lastMoment: Milliseconds = 0
    /// The engine as the last event left it, to sample ramps still running after the last step.
    private var engine: Engine?

    /// A lane being recorded: its open bands by kind.
    private struct Lane {
        var lane: Timeline.Lane
        var open: [Timeline.Band.Kind: (start: Milliseconds, reason: String?)] = [:]
        var live = true
        /// Its class now (the lane's label keeps every class it had).
        var className: String
    }

    mutating func observe(_ engine: Engine, _ moment: FixtureRunner.Moment) {
        switch moment {
        case let .before(_, at):
            sample(engine, through: at)
        case let .after(_, at, commands):
            lastMoment = max(lastMoment, at)
            self.engine = engine
            record(engine, at: at, commands: commands)
        case let .checked(outcome):
            lastMoment = max(lastMoment, outcome.at)
            mark(outcome)
        }
    }

    func timeline(fixture: Fixture, result: FixtureRunner.Result) -> Timeline {
        var copy = self
        let end = max(lastMoment, rampEnds.filter { $0 > lastMoment }.max() ?? lastMoment)
        if let engine { copy.sample(engine, through: end) }
        copy.close(at: end)
        return Timeline(file: fixture.file, title: fixture.description, end: end,
                        lanes: copy.lanes.map(\.lane), nowPlaying: copy.owners, marks: copy.marks, result: result)
    }

    // MARK: - Gains

    /// Samples every live lane's gain after the last sampled time up to `time` (included), from `engine`
    /// as it stands: between events a factor changes only by the ramp in force.
    private mutating func sample(_ engine: Engine, through time: Milliseconds) {
        guard time >= sampledUpTo else { return }
        var times: [Milliseconds] = []
        var next = sampledUpTo + Timeline.sampleInterval
        while next < time {
            times.append(next)
            next += Timeline.sampleInterval
        }
        times += rampEnds.filter { $0 > sampledUpTo && $0 < time }
        times.append(time)
        times = Array(Set(times)).sorted()
        for index in lanes.indices where lanes[index].live && !lanes[index].lane.isHook {
            let id = lanes[index].lane.stream
            for time in times {
                guard let factor = engine.factor(of: id, at: time) else { continue }
                append(Timeline.Sample(at: Double(time), factor: factor), to: index)
            }
        }
        sampledUpTo = time
    }

    /// Adds a sample, leaving out the one before it when a line from its predecessor to the new one
    /// passes through it anyway (a flat stretch): exact points where nothing moves, dense ones in ramps.
    private mutating func append(_ sample: Timeline.Sample, to index: Int) {
        var samples = lanes[index].lane.samples
        if samples.count >= 2 {
            let last = samples[samples.count - 1], before = samples[samples.count - 2]
            if last.factor == sample.factor, before.factor == last.factor, before.at < last.at {
                samples.removeLast()
            }
        }
        if let last = samples.last, last.at == sample.at, last.factor == sample.factor { return }
        samples.append(sample)
        lanes[index].lane.samples = samples
    }

    // MARK: - States

    private mutating func record(_ engine: Engine, at now: Milliseconds, commands: [Command]) {
        var decisions: [StreamID: [Decision]] = [:]
        for command in commands {
            switch command {
            case let .decision(decision):
                decisions[decision.stream, default: []].append(decision)
            case let .ramp(_, _, _, duration), let .mute(_, _, duration), let .unmute(_, _, duration):
                if duration > 0 { rampEnds.insert(now + duration) }
            default:
                break
            }
        }
        var seen: Set<StreamID> = []
        for status in engine.snapshot(at: now) {
            let id = status.stream
            seen.insert(id)
            let index = lane(for: id, status: status, at: now)
            if lanes[index].className != status.className {
                lanes[index].className = status.className
                lanes[index].lane.className += " → \(status.className)"
            }
            if !status.isHook {
                append(Timeline.Sample(at: Double(now), factor: status.factor), to: index)
            }
            var kinds: Set<Timeline.Band.Kind> = []
            if status.isHook {
                // A request waiting for the call has its lane (and its decision) but interrupts nothing yet.
                if !status.isHeldOff, status.state != .waiting { kinds.insert(.interrupting) }
            } else if status.muted {
                kinds.insert(.muted)
            } else if status.state == .paused {
                kinds.insert(.paused)
            } else if status.state == .ducked {
                kinds.insert(.ducked)
            }
            if !status.audible { kinds.insert(.silent) }
            if status.outputLoss != nil { kinds.insert(.outputLost) }
            update(index, kinds: kinds, at: now, decisions: decisions[id] ?? [])
        }
        for index in lanes.indices where lanes[index].live && !seen.contains(lanes[index].lane.stream) {
            update(index, kinds: [], at: now, decisions: [])
            lanes[index].live = false
            lanes[index].lane.ended = now
        }
        let newOwner = engine.nowPlayingOwner
        if newOwner != owner?.id {
            if let owner, now > owner.since {
                owners.append(Timeline.OwnerSegment(owner: owner.id, start: owner.since, end: now))
            }
            owner = newOwner.map { ($0, now) }
        }
    }

    /// The lane of `id`, opened at `now` if it is new (a stream started again after it ended gets a new one).
    private mutating func lane(for id: StreamID, status: StreamStatus?, at now: Milliseconds) -> Int {
        if let index = laneIndex[id], lanes[index].live || status == nil { return index }
        let lane = Timeline.Lane(stream: id, application: status?.application ?? id.rawValue,
                                 className: status?.className ?? "never started", isHook: status?.isHook ?? false,
                                 isCapture: status?.isCapture ?? false,
                                 start: now, ended: status == nil ? now : nil, samples: [], bands: [])
        lanes.append(Lane(lane: lane, live: status != nil, className: lane.className))
        laneIndex[id] = lanes.count - 1
        return lanes.count - 1
    }

    /// Closes the bands of kinds no longer in force and opens the new ones, each with the reason of the
    /// decision (among this moment's, for this stream) that speaks of it: one event can pause a stream
    /// and give back its duck, and the pause is what the paused band is about.
    private mutating func update(_ index: Int, kinds: Set<Timeline.Band.Kind>, at now: Milliseconds,
                                 decisions: [Decision]) {
        for (kind, open) in lanes[index].open where !kinds.contains(kind) {
            if now > open.start {
                lanes[index].lane.bands.append(Timeline.Band(kind: kind, start: open.start, end: now, reason: open.reason))
            }
            lanes[index].open[kind] = nil
        }
        for kind in kinds where lanes[index].open[kind] == nil {
            let outcome: Decision.Outcome? = switch kind {
            case .ducked: .ducked
            case .paused: .paused
            case .muted: .muted
            case .silent, .interrupting, .outputLost: nil
            }
            let speaking = outcome.flatMap { outcome in decisions.last { $0.outcome == outcome } }
            let reason: String? = switch kind {
            case .silent: "its monitor: silent"
            case .paused: speaking.map(Self.describe) ?? "paused by its player or the user"
            case .interrupting: nil
            case .outputLost: engineOutputLoss(decisions)
            default: (speaking ?? decisions.last).map(Self.describe)
            }
            lanes[index].open[kind] = (now, reason)
        }
    }

    /// The decision that muted the stream for its output's loss, among this moment's.
    private func engineOutputLoss(_ decisions: [Decision]) -> String? {
        decisions.first { $0.outcome == .muted || $0.outcome == .paused }.map(Self.describe)
    }

    private static func describe(_ decision: Decision) -> String { "\(decision.reason): \(decision.action)" }

    private mutating func close(at end: Milliseconds) {
        for index in lanes.indices {
            update(index, kinds: [], at: end, decisions: [])
            lanes[index].lane.bands.sort { ($0.start, $0.kind.rawValue) < ($1.start, $1.kind.rawValue) }
        }
        if let owner, end > owner.since {
            owners.append(Timeline.OwnerSegment(owner: owner.id, start: owner.since, end: end))
        }
        self.owner = nil
    }

    // MARK: - Expectations

    private mutating func mark(_ outcome: FixtureRunner.Outcome) {
        var expected: [String] = []
        var volume: Double?
        var lane: Int?
        switch outcome.expectation {
        case let .nowPlaying(id):
            expected.append("now-playing \(id.map { "\"\($0)\"" } ?? "none")")
        case let .stream(id, state, wanted, muted):
            lane = laneIndex[id] ?? self.lane(for: id, status: nil, at: outcome.at)
            if let state { expected.append("state \(state.rawValue)") }
            if let wanted {
                expected.append("volume \(wanted)")
                volume = wanted
            }
            if let muted { expected.append("muted \(muted)") }
        case let .sent(id, sent, notSent):
            lane = laneIndex[id] ?? self.lane(for: id, status: nil, at: outcome.at)
            if !sent.isEmpty { expected.append("sent \(sent.joined(separator: ", "))") }
            if !notSent.isEmpty { expected.append("not sent \(notSent.joined(separator: ", "))") }
        }
        let got = outcome.failures.map { failure in
            "\(failure.subject.split(separator: " ").last.map(String.init) ?? failure.subject) \(failure.got)"
        }
        marks.append(Timeline.Mark(at: outcome.at, stream: outcome.stream, lane: lane, location: outcome.location,
                                   held: outcome.held, expected: expected.joined(separator: ", "),
                                   got: got.isEmpty ? nil : got.joined(separator: ", "), volume: volume))
    }
}
