import AudioPolicy
import AudioPolicyDaemon
import ControlProtocol
import EventLoop
import FoundationEssentials
import FoundationGaps
import Glibc
import PulseBackend
import SoundBackend

// Checkpoints: a quiet moment made on purpose (everything that interrupts ended), awaited through the
// daemon's and the server's events, then compared with what the user chose.
extension SoakRun {
    func beginCheckpoint(final: Bool) {
        checkpointCount += 1
        trace("checkpoint \(checkpointCount) begins")
        let now = MainLoop.monotonicMicroseconds()
        let checkpoint = Checkpoint(number: checkpointCount, final: final, startedAt: now,
                                    deadline: now + UInt64(plan.settleTimeout * 1_000_000))
        for app in apps.values where !app.kind.survives {
            end(app, abruptly: random.chance(plan.abruptShare))
        }
        phase = .settling(checkpoint)
        tick?.schedule(at: checkpoint.deadline)
        evaluate(checkpoint)
    }

    /// Looks again (on a mixer change, a daemon event, or the deadline): once everything is back as
    /// the user left it, the checkpoint passes; at the deadline, what is not is a violation.
    func evaluate(_ checkpoint: Checkpoint) {
        guard case let .settling(current) = phase, current === checkpoint else { return }
        registerStreams()
        let (problems, daemonBusy) = settleProblems()
        let now = MainLoop.monotonicMicroseconds()
        if problems.isEmpty {
            if plan.fault == .strayVolume, !faultInjected, injectStrayVolume() {
                faultInjected = true
                checkpoint.deadline = now + 2_000_000
                checkpoint.holdsFault = true
                tick?.schedule(at: checkpoint.deadline)
                return
            }
            // The checkpoint that injected the fault runs to its deadline: before the server reports
            // the stray level, everything still looks settled, and a user change after an early pass
            // could overwrite the fault before any checkpoint saw it (the project's CI on 627d58a).
            if checkpoint.holdsFault, now < checkpoint.deadline { return }
            return settled(checkpoint, at: now)
        }
        let waits = problems.joined(separator: "; ")
        if waits != checkpoint.waitingFor {
            checkpoint.waitingFor = waits
            trace("checkpoint \(checkpoint.number) waits: " + waits)
        }
        guard now >= checkpoint.deadline else {
            // The churn's one timer may have been taken meanwhile (a lost app, the daemon back): the
            // deadline must stay on it, or a checkpoint that never settles waits forever. While the
            // daemon still ramps a stream, it is asked again a step later: its last step can reach the
            // server (and the mixer's event come) a few ms before its own ramp ends, after which no
            // event comes (the 120 s churn on PulseAudio, seed 7334: a checkpoint waited its whole 15 s
            // for a restore that was over, and the next checkpoints of a short churn may not fit).
            tick?.schedule(at: daemonBusy ? min(checkpoint.deadline, now + 20_000) : checkpoint.deadline)
            return
        }
        for problem in problems { violation("checkpoint \(checkpoint.number): \(problem)") }
        settled(checkpoint, at: now)
    }

    /// What is not yet as the user left it: apps that should have ended, a daemon that still ducks or
    /// pauses something, and surviving streams away from the user's level or mute. `daemonBusy`: the
    /// daemon still has a stream away from factor 1 (its ramps end on its own clock, with no event).
    func settleProblems() -> (problems: [String], daemonBusy: Bool) {
        var problems: [String] = []
        var daemonBusy = false
        guard mixer.isReady else { return (["the mixer is not connected"], false) }
        let survivors = apps.values.filter(\.kind.survives)
        let ours = Set(survivors.compactMap(\.index))
        for (index, stream) in mixer.streams.sorted(by: { $0.key < $1.key }) where !ours.contains(index) {
            problems.append("sink input #\(index) (\(stream.applicationName ?? "?")) is still there though its app quit")
        }
        for app in survivors where app.index == nil || app.index.map({ mixer.streams[$0] == nil }) == true {
            problems.append("the music app's stream \(app.number) never appeared")
        }
        if let status = daemon.status() {
            for row in status.streams {
                guard let index = row.index else {
                    problems.append("the daemon still holds a hook interruption \(row.hook ?? "?")")
                    continue
                }
                let corked = mixer.streams[index]?.corked == true
                if abs(row.factor - 1) > 1e-6 || row.state == .ducked || (row.state == .paused && !corked) {
                    daemonBusy = daemonBusy || abs(row.factor - 1) > 1e-6
                    problems.append("the daemon still has stream #\(index) (\(row.application)) \(row.state.rawValue), "
                        + String(printf: "factor %.3f", row.factor))
                }
            }
        } else {
            problems.append("the daemon does not answer status")
        }
        for index in ours.sorted() {
            guard let level = levels.level(of: index), let stream = mixer.streams[index],
                  !level.accepts(volume: stream.volume, muted: stream.muted) else { continue }
            let others = level.alternatives.isEmpty ? "" : " (or \(level.alternatives.map(\.values)))"
            if !level.accepts(volume: stream.volume, muted: level.eitherMute ? stream.muted : level.muted) {
                problems.append("stream #\(index) (\(stream.applicationName ?? "?")) is at \(stream.volume.values) "
                    + "(\(stream.volume)); the user's level is \(level.volume.values) (\(level.volume))\(others)")
            } else {
                problems.append("stream #\(index) (\(stream.applicationName ?? "?")) is \(stream.muted ? "muted" : "unmuted"); "
                    + "the user left it \(level.muted ? "muted" : "unmuted")")
            }
        }
        return (problems, daemonBusy)
    }

    /// The injected fault: half a surviving stream's level, set behind the user's back.
    func injectStrayVolume() -> Bool {
        guard let index = apps.values.filter(\.kind.survives).compactMap(\.index).sorted().first,
              let level = levels.level(of: index) else { return false }
        mixer.setVolume(index, to: level.volume.scaled(by: 0.5))
        say(String(printf: "%7.1fs  fault injected: stream #%u set to half its level behind the user's back", elapsed, index))
        return true
    }

    /// The streams are compared: read the saved entries, then take the memory figure.
    func settled(_ checkpoint: Checkpoint, at now: UInt64) {
        report.checkpoints += 1
        for app in apps.values where app.kind.survives {
            guard let index = app.index, let stream = mixer.streams[index] else { continue }
            levels.settle(index, volume: stream.volume, muted: stream.muted)
        }
        report.settleSeconds.append(Double(now - checkpoint.startedAt) / 1e6)
        report.streamsChecked += apps.values.filter(\.kind.survives).count
        phase = .readingEntries(checkpoint)
        readEntries(checkpoint)
    }

    /// Saved entries the daemon repaired can lag behind on PipeWire (WirePlumber applies them from
    /// its metadata): a wrong one is read again, up to four times half a second apart, before it
    /// counts.
    func readEntries(_ checkpoint: Checkpoint) {
        checkpoint.entryReads += 1
        mixer.readSavedEntries { [unowned self] entries in
            guard case let .readingEntries(current) = phase, current === checkpoint else { return }
            let ours = (entries ?? []).filter { levels.knownKeys.contains($0.name) }
            let problems = ours.compactMap { levels.problem(with: $0) }
            if !problems.isEmpty, checkpoint.entryReads < 5 {
                let retry = MainLoop.Timer(loop: loop) { [unowned self] in readEntries(checkpoint) }
                retry.schedule(after: 500_000)
                entryRetry = retry
                return
            }
            if entries == nil { violation("checkpoint \(checkpoint.number): the saved entries could not be read") }
            for problem in problems {
                // pipewire-pulse reads back only what WirePlumber keeps in its metadata, which lags behind
                // (or predates the soak by runs): what the server gives a key's next stream is checked
                // there instead, when the stream starts and at checkpoints.
                if mixer.serverDescription?.contains("PipeWire") == true {
                    if !report.notes.contains(problem) { report.notes.append(problem) }
                } else if reportedEntries.insert(problem).inserted {
                    // Once per entry and level: a wrong entry stays wrong until a stream of its key changes it.
                    violation("checkpoint \(checkpoint.number): \(problem)")
                }
            }
            report.entriesChecked += ours.count
            finishCheckpoint(checkpoint, entries: ours.count)
        }
    }

    func finishCheckpoint(_ checkpoint: Checkpoint, entries: Int) {
        let rss = daemon.residentKiB
        if let rss { report.residentKiB.append((daemon.starts, rss)) }
        let now = MainLoop.monotonicMicroseconds()
        let rssText = rss.map { String(printf: "%.1f MiB", Double($0) / 1024) } ?? "?"
        say(String(printf: "%7.1fs  checkpoint %d: %d streams kept, %d saved entries, daemon RSS ",
                   elapsed, checkpoint.number, apps.values.filter(\.kind.survives).count, entries)
            + "\(rssText), \(report.violations.count) violations so far")
        if checkpoint.final { return finish() }
        phase = .churning
        nextCheckpoint = now + random.around(seconds: plan.checkpointInterval)
        // Kills and restarts keep their distance from a checkpoint's end.
        nextKill = max(nextKill, now + 1_000_000)
        nextRestart = max(nextRestart, now + 1_000_000)
        tick?.schedule(after: 0)
    }

    /// The apps' streams the mixer sees for the first time (with their volume known: pipewire-pulse
    /// announces a stream at 0 and tells its volume a moment later): their own level and mute.
    func registerStreams() {
        for app in apps.values {
            guard let index = app.index, appOfStream[index] == nil, let stream = mixer.streams[index],
                  !stream.volumePending else { continue }
            appOfStream[index] = app.number
            let level = UserLevels.Level(volume: stream.volume, muted: stream.muted)
            let problem = levels.started(index, key: stream.restoreID, level: level, requested: app.volume)
            trace("app \(app.number) is stream #\(index) (\(stream.restoreID ?? "no key")), seen at \(stream.volume.values)"
                + "\(stream.muted ? " muted" : ""); own level \(levels.level(of: index).map { "\($0.volume.values)\($0.muted ? " muted" : "")" } ?? "?")")
            if let problem { violation(problem) }
        }
    }

    /// The end: the daemon is stopped as a service manager stops it (SIGTERM: it restores everything
    /// and exits 0), the apps quit, the loop ends.
    func finish() {
        guard !isFinished else { return }
        phase = .finished
        tick?.cancel()
        poll?.cancel()
        events = nil
        if daemon.isRunning {
            switch daemon.terminate(timeout: 10) {
            case .code(0)?: break
            case let exit?: violation("the daemon's clean stop (SIGTERM) ended with \(exit); its log ends:\n\(daemon.logTail())")
            case nil: violation("the daemon did not stop within 10 s of SIGTERM")
            }
        }
        for app in apps.values { app.quit(abruptly: false) }
        apps.removeAll()
        report.server = report.server ?? mixer.serverDescription
        mixer.disconnect()
        loop.quit(0)
    }

    var isFinished: Bool {
        if case .finished = phase { return true }
        return false
    }

    /// A leak: one daemon's memory grew by more than the plan allows between its first and last
    /// checkpoint.
    func checkMemory() {
        for start in Set(report.residentKiB.map(\.daemon)) {
            let samples = report.residentKiB.filter { $0.daemon == start }.map(\.kiB)
            guard let first = samples.first, let last = samples.last, samples.count > 1 else { continue }
            if last - first > plan.rssGrowthLimitKiB {
                violation("daemon start \(start) grew from \(first / 1024) MiB to \(last / 1024) MiB over "
                    + "\(samples.count) checkpoints")
            }
        }
    }
}
