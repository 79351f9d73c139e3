import EventLoop

/// Work to run on the loop's next turn, in the order posted: how the backend answers a call without
/// calling back inside it, as a sound server's reply would arrive.
///
/// One timer, armed only while something waits.
final class Postponed {
    private var work: [() -> Void] = []
    private var timer: MainLoop.Timer?

    init(loop: MainLoop) {
        timer = MainLoop.Timer(loop: loop) { [unowned self] in self.runAll() }
    }

    func post(_ body: @escaping () -> Void) {
        work.append(body)
        if work.count == 1 { timer?.schedule(after: 0) }
    }

    private func runAll() {
        // What runs may post more: that waits for the turn after.
        let due = work
        work = []
        for body in due { body() }
    }
}
