import ArgumentParser
import AudioPolicy
import AudioPolicyDaemon
import FoundationEssentials
import FoundationGaps
import Glibc

/// `audio-policyd test`: replays fixtures against the engine with a virtual clock.
struct Test: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replay fixtures (files or folders of .toml) against a policy, without a sound server.",
        discussion: """
            Each fixture uses --policy if given, else its own `policy` key (relative to the fixture), \
            else the embedded default. Prints a line per fixture, a diff per failed expectation, and \
            `N passed, N failed`; exits 0 only if all pass. With --timeline DIR, also draws each \
            fixture's replay as DIR/NAME.svg (as `audio-policyd plot` does).
            """)

    @Option(name: .long, help: "Policy file to use for every fixture.")
    var policy: String?

    @Flag(name: .shortAndLong, help: "Print only failures and the summary.")
    var quiet = false

    @Option(help: ArgumentHelp("Also write each fixture's timeline picture, NAME.svg, into this folder.",
                               valueName: "dir"))
    var timeline: String?

    @Argument(help: "Fixture files or folders.")
    var fixtures: [String]

    func run() throws {
        var policies = PolicyCache(override: policy)
        let paths = try FixtureFiles.expand(fixtures)
        // Loading and replaying are pure and independent: both run on every core; policies are read
        // once each, in between.
        let loaded = paths.concurrentMap { path in
            Result { () throws(LocatedErrors) in try FixtureLoader.load(text: try PolicyFile.readText(path), file: path) }
        }
        let jobs = loaded.map { fixture in
            fixture.flatMap { fixture in
                Result { () throws(LocatedErrors) in
                    (fixture, try policies.policy(for: fixture), try policies.reloads(for: fixture))
                }
            }
        }
        let drawing = timeline != nil
        // With --timeline, the one replay gives both the verdict and the picture.
        let replays = jobs.concurrentMap { job in
            job.map { fixture, policy, reloads in
                drawing ? Replay(timeline: Timeline.replay(fixture, policy: policy, reloads: reloads))
                    : Replay(result: FixtureRunner(reloads: reloads).run(fixture, policy: policy))
            }
        }
        if let folder = timeline {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let names = TimelineFile.names(for: paths)
            for (name, replay) in zip(names, replays) {
                // A levels fixture replays saved levels on a model server: no engine lanes to draw.
                guard case let .success(replay) = replay, let picture = replay.timeline,
                      replay.result.fixture.levels == nil else { continue }
                try TimelineFile.write(picture, to: folder.appendingPath(name))
            }
        }
        let results = replays.map { $0.map(\.result) }

        var passed = 0, failed = 0
        for (path, result) in zip(paths, results) {
            switch result {
            case let .success(result) where result.passed:
                passed += 1
                if !quiet { print("PASS \(path)\(Self.titled(result.fixture))") }
            case let .success(result):
                failed += 1
                print("FAIL \(path)\(Self.titled(result.fixture))")
                for failure in result.failures { print("  \(failure)") }
            case let .failure(errors):
                failed += 1
                print("FAIL \(path)")
                for error in errors.errors { print("  \(error)") }
            }
        }
        print("\(passed) passed, \(failed) failed")
        if failed > 0 || passed == 0 { throw ExitCode.failure }
    }
}

extension Test {
    /// One fixture's replay: its verdict, and its picture when one was asked for.
    struct Replay {
        var result: FixtureRunner.Result
        var timeline: Timeline?

        init(result: FixtureRunner.Result) { self.result = result }
        init(timeline: Timeline) {
            self.result = timeline.result
            self.timeline = timeline
        }
    }

    static func titled(_ fixture: Fixture) -> String {
        fixture.description.map { " — \($0)" } ?? ""
    }
}

/// Fixture paths: files as given, folders searched for `.toml` files, in a stable order.
enum FixtureFiles {
    static func expand(_ paths: [String]) throws -> [String] {
        var files: [String] = []
        for path in paths {
            var isDirectory = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw ValidationError("no such fixture file or folder: \(path)")
            }
            guard isDirectory else {
                files.append(path)
                continue
            }
            let found = (try? FileManager.default.subpathsOfDirectory(atPath: path)) ?? []
            files += found.filter { $0.hasSuffix(".toml") }.sorted().map { path.appendingPath($0) }
        }
        return files
    }
}

/// Policies for fixtures, each file read once however many fixtures name it.
struct PolicyCache {
    let override: String?
    private var loaded: [String: Policy] = [:]

    init(override: String?) { self.override = override }

    mutating func policy(for fixture: Fixture) throws(LocatedErrors) -> Policy {
        if let override { return try load(override) }
        return try load(fixture.policyPath.map { Self.resolve($0, in: fixture) })
    }

    /// The policies `fixture`'s `reload` steps name, by the path as written (`--policy` does not change
    /// them: a reload says which policy it brings).
    mutating func reloads(for fixture: Fixture) throws(LocatedErrors) -> [String: Policy] {
        var reloads: [String: Policy] = [:]
        for written in fixture.reloadPaths {
            reloads[written] = try load(written == Policy.embeddedDefaultSource ? nil : Self.resolve(written, in: fixture))
        }
        return reloads
    }

    /// A path as a fixture writes it: absolute, or relative to the fixture file.
    private static func resolve(_ written: String, in fixture: Fixture) -> String {
        written.hasPrefix("/") ? written : fixture.file.pathFolder.appendingPath(written)
    }

    /// The policy at `path` (nil: the embedded default), read once.
    private mutating func load(_ path: String?) throws(LocatedErrors) -> Policy {
        let key = path ?? ""
        if let policy = loaded[key] { return policy }
        let policy = try PolicyFile.load(path: path)
        loaded[key] = policy
        return policy
    }
}
