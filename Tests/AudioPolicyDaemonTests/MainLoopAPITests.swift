import CPulse
import EventLoop
import Glibc
import Testing

/// The loop's libpulse interface (`pa_mainloop_api`) keeps `pa_mainloop`'s semantics where libpulse
/// relies on them and ``MainLoop``'s wrappers do not reach: deferred events, destroy callbacks, an
/// event freed from a callback, wall-clock timevals.
@Suite struct MainLoopAPITests {
    /// What a C callback counts, reached through its userdata.
    final class Counts {
        var calls = 0
        var destroyed = 0
        var other: OpaquePointer?
    }

    @Test func aDeferredEventRunsEveryIterationUntilDisabled() {
        let loop = MainLoop()
        let counts = Counts()
        let api = loop.api
        let event = api.pointee.defer_new(api, { _, _, userdata in
            Unmanaged<Counts>.fromOpaque(userdata!).takeUnretainedValue().calls += 1
        }, Unmanaged.passUnretained(counts).toOpaque())
        for _ in 0..<3 { loop.iterate(blocking: false) }
        #expect(counts.calls == 3)
        api.pointee.defer_enable(event, 0)
        loop.iterate(blocking: false)
        #expect(counts.calls == 3, "a disabled deferred event ran")
        api.pointee.defer_free(event)
    }

    @Test func anEventFreedInItsOwnCallbackIsNotCalledAgainAndIsDestroyedOnce() {
        let loop = MainLoop()
        let counts = Counts()
        let api = loop.api
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        var byte: UInt8 = 1
        #expect(write(fds[1], &byte, 1) == 1) // readable until read: a level-triggered loop calls again
        let event = api.pointee.io_new(api, fds[0], PA_IO_EVENT_INPUT, { api, event, _, _, userdata in
            Unmanaged<Counts>.fromOpaque(userdata!).takeUnretainedValue().calls += 1
            api!.pointee.io_free(event)
        }, Unmanaged.passUnretained(counts).toOpaque())
        api.pointee.io_set_destroy(event) { _, _, userdata in
            Unmanaged<Counts>.fromOpaque(userdata!).takeUnretainedValue().destroyed += 1
        }
        for _ in 0..<3 { loop.iterate(blocking: false) }
        #expect(counts.calls == 1)
        #expect(counts.destroyed == 1)
    }

    @Test func aTimerFreedByAnEarlierCallbackOfTheSameIterationDoesNotFire() {
        let loop = MainLoop()
        let api = loop.api
        let first = Counts(), second = Counts()
        var now = timeval()
        gettimeofday(&now, nil)
        let callback: pa_time_event_cb_t = { api, _, _, userdata in
            let counts = Unmanaged<Counts>.fromOpaque(userdata!).takeUnretainedValue()
            counts.calls += 1
            if let other = counts.other { api!.pointee.time_free(other) }
        }
        // Both due at once (a wall-clock time in the past): whichever runs first frees the other.
        let a = api.pointee.time_new(api, &now, callback, Unmanaged.passUnretained(first).toOpaque())
        let b = api.pointee.time_new(api, &now, callback, Unmanaged.passUnretained(second).toOpaque())
        first.other = b
        second.other = a
        loop.iterate(blocking: false)
        #expect(first.calls + second.calls == 1)
    }

    @Test func aWallClockTimevalFiresAfterItsDelay() {
        let loop = MainLoop()
        let api = loop.api
        let counts = Counts()
        var due = timeval()
        gettimeofday(&due, nil)
        due.tv_usec += 30_000
        if due.tv_usec >= 1_000_000 { due.tv_sec += 1; due.tv_usec -= 1_000_000 }
        let start = MainLoop.monotonicMicroseconds()
        let event = api.pointee.time_new(api, &due, { _, _, _, userdata in
            Unmanaged<Counts>.fromOpaque(userdata!).takeUnretainedValue().calls += 1
        }, Unmanaged.passUnretained(counts).toOpaque())
        while counts.calls == 0 { loop.iterate() }
        let waited = MainLoop.monotonicMicroseconds() - start
        #expect(waited >= 25_000, "fired after \(waited) µs")
        loop.iterate(blocking: false)
        #expect(counts.calls == 1, "a one-shot timer fired again")
        api.pointee.time_free(event)
    }
}
