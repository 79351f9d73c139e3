import AudioPolicy
import AudioPolicyTools
import EventLoop
import Foundation
import PulseBackend
import SoundBackend
import TestRequirements
import Testing

// A peak meter on a real server's sink input (PULSE_SERVER, AUDIO_POLICYD_SERVER_KIND; see scripts/test).

@Suite(.serialized, .needs(TestEnvironment.soundServerMissing))
final class PeakMeterTests {
    let connection = LoopConnection()
    var children: [Child] = []

    deinit {
        for child in children { child.kill() }
    }

    private func play(_ file: URL, name: String) throws -> Child {
        let child = try Child(["paplay", "--client-name=\(name)", "--property=application.name=\(name)",
                               "--property=media.role=music", file.path])
        children.append(child)
        return child
    }

    /// Puts `stream` at 100 %: the tests' levels are the tone's own. The server may have restored a level
    /// an earlier test left on its role (WirePlumber keys its saved levels by `media.role`: after a
    /// daemon test's music at 85 %/70 %, the tone read 0.19 on the mono meter, not 0.4).
    private static func atFullVolume(_ stream: SinkInput) throws {
        try SoundServer.setVolume(stream.index, raw: [65536, 65536])
    }

    /// A meter on `stream` that records its peaks with their arrival times.
    private func meter(_ stream: SinkInput, into peaks: Peaks) throws -> PeakMeter {
        let meter = try #require(connection.pulse.peakMeter(sinkInput: stream.index, sink: stream.sinkIndex) { peak in
            peaks.add(peak)
        })
        return meter
    }

    final class Peaks {
        var values: [(time: UInt64, peak: Float)] = []
        func add(_ peak: Float) { values.append((MainLoop.monotonicMicroseconds(), peak)) }
        var max: Float { values.map(\.peak).max() ?? -1 }
        func audibility(startedAt: UInt64) -> AudibilityDetector {
            var audibility = AudibilityDetector(startedAt: startedAt)
            for value in values { _ = audibility.add(peak: value.peak, at: value.time) }
            return audibility
        }
    }

    // MARK: - Tests

    /// A tone and digital silence, played at the same time to the same sink: each meter hears only
    /// its own sink input, and the two come out differently.
    @Test func aToneIsAudibleAndDigitalSilenceIsNot() throws {
        try connection.connect()
        let tonePlayer = try play(try Tone.music.file(), name: "meter-tone")
        let silencePlayer = try play(try TestSounds.silence(), name: "meter-silence")
        let toneStream = try connection.awaitStream(ofProcess: tonePlayer.pid)
        try Self.atFullVolume(toneStream)
        let silenceStream = try connection.awaitStream(ofProcess: silencePlayer.pid)
        let start = MainLoop.monotonicMicroseconds()
        let tonePeaks = Peaks(), silencePeaks = Peaks()
        let toneMeter = try meter(toneStream, into: tonePeaks)
        let silenceMeter = try meter(silenceStream, into: silencePeaks)
        // The first peak can take as long as the sink's buffer: a sink running at its default 2 s latency
        // has rendered that much before the meter attached (see PeakMeter), and the meter hears only what
        // is rendered after. Then 1 s more: about six peaks, and more than the hangover.
        try #require(connection.runLoop(until: { !tonePeaks.values.isEmpty && !silencePeaks.values.isEmpty },
                                        seconds: 5), "no peaks: \(toneMeter.state), \(silenceMeter.state)")
        connection.run(for: 1)
        print("[\(TestEnvironment.serverKind)] tone: \(tonePeaks.values.count) peaks, max \(tonePeaks.max); "
              + "silence: \(silencePeaks.values.count) peaks, max \(silencePeaks.max)")
        #expect(toneMeter.state == .measuring)
        #expect(silenceMeter.state == .measuring)
        // 1 s: about 6 peaks on either server (see PeakMeter.rate and PulseConnection.meter).
        #expect(tonePeaks.values.count >= 3)
        #expect(silencePeaks.values.count >= 3)
        // The tone is written at 0.4 (−8 dBFS).
        #expect(tonePeaks.max > 0.2)
        #expect(tonePeaks.max < 0.6)
        #expect(silencePeaks.max < Float(AudibilityThresholds().silentBelow.linear))
        let tone = tonePeaks.audibility(startedAt: start), silence = silencePeaks.audibility(startedAt: start)
        #expect(tone.isAudible)
        #expect(!silence.isAudible)
        #expect(connection.errors.isEmpty, "\(connection.errors)")
    }

    /// At most 10 peaks (wake-ups) a second, give or take one: 10 on PulseAudio, 5.9 on pipewire-pulse.
    @Test func deliversAtMostTenPeaksASecond() throws {
        try connection.connect()
        let player = try play(try Tone.music.file(), name: "meter-rate")
        let stream = try connection.awaitStream(ofProcess: player.pid)
        let peaks = Peaks()
        let meter = try meter(stream, into: peaks)
        try #require(connection.runLoop(until: { peaks.values.count >= 2 }), "no peaks")
        let first = peaks.values.count
        let start = MainLoop.monotonicMicroseconds()
        connection.run(for: 3)
        let seconds = Double(MainLoop.monotonicMicroseconds() - start) / 1_000_000
        let rate = Double(peaks.values.count - first) / seconds
        print(String(format: "[%@] %.2f peaks/s over %.2f s", TestEnvironment.serverKind, rate, seconds))
        let gaps = zip(peaks.values.dropFirst(), peaks.values).map { Double($0.time - $1.time) / 1000 }
        print("[\(TestEnvironment.serverKind)] gaps between peaks (ms): "
              + gaps.map { String(format: "%.0f", $0) }.joined(separator: " "))
        // The budget: a measured stream may wake the daemon at most 10 times a second.
        #expect(rate <= 10)
        #expect(rate >= Double(PeakMeter.rate) - 1.5)
        _ = meter
    }

    /// The sink input ending ends the meter (reported, no crash); closing afterwards is harmless.
    @Test func survivesItsSinkInputEnding() throws {
        try connection.connect()
        let player = try play(try Tone.music.file(), name: "meter-end")
        let stream = try connection.awaitStream(ofProcess: player.pid)
        let peaks = Peaks()
        let meter = try meter(stream, into: peaks)
        var ended: String?
        meter.onEnd = { ended = $0 }
        try #require(connection.runLoop(until: { peaks.values.count >= 2 }), "no peaks")
        player.kill()
        try #require(connection.runLoop(until: { self.connection.streamsRemoved.contains(stream.index) }))
        let endedInTime = connection.runLoop(until: { ended != nil }, seconds: 3)
        print("[\(TestEnvironment.serverKind)] after the sink input ended: \(meter.state), "
              + "\(meter.reconnections) reconnections")
        #expect(endedInTime, "the meter did not end: \(meter.state)")
        #expect(meter.state == .ended("sink input \(stream.index) ended"))
        let count = peaks.values.count
        connection.run(for: 0.3)
        #expect(peaks.values.count == count, "peaks after the end")
        meter.close()
        meter.close()
    }

    /// A sink input moved to another sink: the meter follows it there.
    @Test func followsItsSinkInputToAnotherSink() throws {
        try connection.connect()
        let module = try run("pactl", "load-module", "module-null-sink", "sink_name=meter_other_sink")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        defer { _ = try? run("pactl", "unload-module", module) }
        let player = try play(try Tone.music.file(), name: "meter-move")
        let stream = try connection.awaitStream(ofProcess: player.pid)
        try Self.atFullVolume(stream)
        let peaks = Peaks()
        let meter = try meter(stream, into: peaks)
        try #require(connection.runLoop(until: { peaks.values.count >= 2 }), "no peaks")
        let firstSource = meter.source
        try run("pactl", "move-sink-input", String(stream.index), "meter_other_sink")
        connection.run(for: 0.3)
        let count = peaks.values.count
        let more = connection.runLoop(until: { peaks.values.count >= count + 5 }, seconds: 3)
        print("[\(TestEnvironment.serverKind)] after the move: \(meter.state), sink \(meter.sink), "
              + "source \(String(describing: firstSource)) → \(String(describing: meter.source)), "
              + "\(meter.reconnections) reconnections, max peak since \(peaks.values.dropFirst(count).map(\.peak).max() ?? -1)")
        #expect(more, "no peaks after the move: \(meter.state)")
        #expect(meter.state == .measuring)
        #expect((peaks.values.dropFirst(count).map(\.peak).max() ?? 0) > 0.2)
    }

    /// How long from a stream being announced to its meter's first above-threshold peak (printed).
    @Test func latencyFromAnnouncementToFirstLoudPeak() throws {
        try connection.connect()
        let tries = Int(TestEnvironment.variables["AUDIO_POLICYD_METER_TRIES"] ?? "") ?? 5
        var latencies: [Double] = []
        for n in 0..<tries {
            let player = try play(try Tone.music.file(), name: "meter-latency-\(n)")
            let stream = try connection.awaitStream(ofProcess: player.pid)
            let announced = try #require(connection.announced[stream.index])
            var loudAt: UInt64?
            let meter = try #require(connection.pulse.peakMeter(sinkInput: stream.index, sink: stream.sinkIndex) { peak in
                if loudAt == nil, peak > Float(AudibilityThresholds().heardAbove.linear) { loudAt = MainLoop.monotonicMicroseconds() }
            })
            try #require(connection.runLoop(until: { loudAt != nil }), "no loud peak")
            latencies.append(Double(loudAt! - announced) / 1000)
            meter.close()
            player.kill()
            try #require(connection.runLoop(until: { self.connection.streamsRemoved.contains(stream.index) }))
        }
        let summary = try #require(Percentiles(latencies))
        print(String(format: "[%@] announced → first loud peak over %d tries: p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms",
                     TestEnvironment.serverKind, tries, summary.p50, summary.p90, summary.p99, summary.max))
    }

    /// CPU of this process with 1 and with 10 meters running (printed): a measurement, not a check, run
    /// only with AUDIO_POLICYD_MEASURE=1 (scripts/test leaves it out with `--skip`, so that it is not a
    /// skipped test in CI).
    @Test(.enabled(if: TestEnvironment.variables["AUDIO_POLICYD_MEASURE"] == "1"))
    func cpuOfOneAndTenMeters() throws {
        try connection.connect()
        let seconds = 10.0
        func cpuTicks() -> Int {
            let stat = (try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8)) ?? ""
            let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
            // After "(comm)": state is field 3, utime 14, stime 15 → indexes 11 and 12 here.
            return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
        }
        let hz = Double(sysconf(Int32(_SC_CLK_TCK)))
        var streams: [SinkInput] = []
        for n in 0..<10 {
            let player = try play(try Tone.music.file(), name: "meter-cpu-\(n)")
            streams.append(try connection.awaitStream(ofProcess: player.pid))
        }
        // Baseline: the loop with ten streams playing and no meter.
        for count in [0, 1, 10] {
            var peaks = 0
            let meters = try streams.prefix(count).map { stream in
                try #require(connection.pulse.peakMeter(sinkInput: stream.index, sink: stream.sinkIndex) { _ in peaks += 1 })
            }
            connection.run(for: 1)
            peaks = 0
            let switches = ProcessStats.current().contextSwitches
            let ticks = cpuTicks()
            connection.run(for: seconds)
            let cpu = Double(cpuTicks() - ticks) / hz
            print(String(format: "[%@] %d meters: %.1f peaks/s, CPU %.3f s in %.0f s (%.2f %%), %.1f context switches/s",
                         TestEnvironment.serverKind, count, Double(peaks) / seconds, cpu, seconds, cpu / seconds * 100,
                         Double(ProcessStats.current().contextSwitches - switches) / seconds))
            for meter in meters { meter.close() }
        }
    }
}
