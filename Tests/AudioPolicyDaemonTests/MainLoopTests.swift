import AudioPolicy
import EventLoop
import Foundation
import PulseBackend
import SoundBackend
import Testing

/// The main loop's own event sources, and channel volumes: pure, no sound server needed.
@Suite(.serialized)
struct MainLoopTests {
    @Test func timerFiresOnceAtItsDeadline() {
        let loop = MainLoop()
        var firedAt: [UInt64] = []
        let timer = MainLoop.Timer(loop: loop) { firedAt.append(MainLoop.monotonicMicroseconds()) }
        let deadline = MainLoop.monotonicMicroseconds() + 30_000
        timer.schedule(at: deadline)
        #expect(timer.deadline == deadline)
        var done = false
        let end = MainLoop.Timer(loop: loop) { done = true }
        end.schedule(after: 80_000)
        while !done { loop.iterate() }
        #expect(firedAt.count == 1)
        #expect(firedAt.first.map { $0 >= deadline } == true)
        #expect(!timer.isScheduled)
    }

    @Test func cancelledTimerNeitherFiresNorWakesTheLoop() {
        let loop = MainLoop()
        var fired = false
        let cancelled = MainLoop.Timer(loop: loop) { fired = true }
        cancelled.schedule(after: 10_000)
        cancelled.cancel()
        var done = false
        let end = MainLoop.Timer(loop: loop) { done = true }
        end.schedule(after: 60_000)
        var iterations = 0
        while !done {
            loop.iterate()
            iterations += 1
        }
        #expect(!fired)
        #expect(iterations == 1, "the loop woke up \(iterations) times")
    }

    @Test func rescheduledTimerFiresAtTheNewDeadline() {
        let loop = MainLoop()
        var fired = 0
        let timer = MainLoop.Timer(loop: loop) { fired += 1 }
        timer.schedule(after: 10_000)
        timer.schedule(after: 50_000)
        let start = MainLoop.monotonicMicroseconds()
        while fired == 0 { loop.iterate() }
        #expect(MainLoop.monotonicMicroseconds() - start >= 50_000)
    }

    @Test func ioWatchReportsAReadableDescriptor() {
        let loop = MainLoop()
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        var seen: MainLoop.IOWatch.Events = []
        let watch = MainLoop.IOWatch(loop: loop, fd: fds[0], events: .readable) { seen = $0 }
        var byte: UInt8 = 1
        #expect(write(fds[1], &byte, 1) == 1)
        while seen.isEmpty { loop.iterate() }
        #expect(seen.contains(.readable))
        _ = watch
    }

    @Test func signalsArriveOnTheLoop() throws {
        let loop = MainLoop()
        var caught: [Int32] = []
        let handler = try MainLoop.SignalHandler(loop: loop, signals: [SIGUSR1]) { caught.append($0) }
        #expect(throws: MainLoop.SignalHandler.AlreadyInstalled.self) {
            _ = try MainLoop.SignalHandler(loop: loop, signals: [SIGUSR2]) { _ in }
        }
        raise(SIGUSR1)
        while caught.isEmpty { loop.iterate() }
        #expect(caught == [SIGUSR1])
        _ = handler
    }

    @Test func quitEndsRunWithItsCode() {
        let loop = MainLoop()
        let timer = MainLoop.Timer(loop: loop) { loop.quit(3) }
        timer.schedule(after: 1_000)
        #expect(loop.run() == 3)
    }

    /// Loop-only code can tell whether it runs on the loop's thread (the daemon asserts it in debug builds).
    @Test func knowsItsThread() {
        let loop = MainLoop()
        var insideCallback: Bool?
        let timer = MainLoop.Timer(loop: loop) { insideCallback = loop.isOnLoopThread; loop.quit(0) }
        timer.schedule(after: 1_000)
        loop.run()
        #expect(insideCallback == true)
        #expect(loop.isOnLoopThread, "the thread that ran it")
        // The control: another thread is not the loop's.
        let probe = ThreadProbe(loop)
        let other = Thread { probe.answer(probe.loop.isOnLoopThread) }
        other.start()
        #expect(probe.wait() == false)
    }

    @Test func channelVolumesScaleByLinearAmplitude() {
        let full = ChannelVolumes(uniform: ChannelVolumes.norm, channels: 2)
        let ducked = full.scaled(by: 0.2)
        #expect(abs(ducked.averageLinear - 0.2) < 0.0005)
        #expect(ducked.scaled(by: 0.5).matches(full.scaled(by: 0.1)))
        #expect(full.scaled(by: 0).values == [0, 0])
        #expect(full.matches(ChannelVolumes(values: [ChannelVolumes.norm + 1, ChannelVolumes.norm - 1])))
        #expect(!full.matches(ChannelVolumes(values: [ChannelVolumes.norm + 2, ChannelVolumes.norm])))
        #expect(!full.matches(ChannelVolumes(uniform: ChannelVolumes.norm, channels: 1)))
    }
}

/// Asks a loop from another thread, and hands the answer back.
private final class ThreadProbe: @unchecked Sendable {
    let loop: MainLoop
    private let done = NSCondition()
    private var result: Bool?

    init(_ loop: MainLoop) { self.loop = loop }

    func answer(_ value: Bool) {
        done.lock()
        result = value
        done.signal()
        done.unlock()
    }

    func wait() -> Bool? {
        done.lock()
        defer { done.unlock() }
        while result == nil { done.wait() }
        return result
    }
}
