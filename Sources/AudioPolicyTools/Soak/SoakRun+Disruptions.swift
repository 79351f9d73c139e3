import AudioPolicyDaemon
import ControlProtocol
import EventLoop
import FoundationEssentials
import FoundationGaps
import Glibc

// What the soak does to the daemon and the server: SIGKILL and a new start, a server restart, and
// noticing an exit nobody asked for (a crash).
extension SoakRun {
    /// Starts the daemon and polls (every 100 ms) until it answers and is connected to the server.
    func startDaemon() throws {
        try daemon.start()
        trace("daemon start \(daemon.starts), pid \(daemon.pid.map(String.init) ?? "?")")
        daemonStirredAt = MainLoop.monotonicMicroseconds()
        daemonReady = false
        events = nil
        poll?.schedule(after: 100_000)
    }

    /// Polls the daemon's control socket while it starts or reconnects: it has no event to wait on
    /// before it answers.
    func pollDaemon() {
        noticeDaemonExit()
        if let until = daemonDownUntil {
            guard MainLoop.monotonicMicroseconds() >= until else { return poll?.schedule(at: until) ?? () }
            daemonDownUntil = nil
            do {
                try startDaemon()
            } catch {
                violation("cannot start the daemon again: \(error)")
                return finish()
            }
            return
        }
        guard daemon.isRunning, let status = daemon.status(), status.server != nil else {
            return poll?.schedule(after: 100_000) ?? ()
        }
        if events?.isOpen != true {
            events = try? DaemonEvents(loop: loop, socketPath: daemon.socketPath) { [unowned self] in daemonChanged() }
        }
        daemonReady = true
        daemonStirredAt = MainLoop.monotonicMicroseconds()
        if case .reconnecting = phase { reconnected() }
        tick?.schedule(after: 0)
    }

    func daemonChanged() {
        if case let .settling(checkpoint) = phase { evaluate(checkpoint) }
        if events?.isOpen == false { noticeDaemonExit() }
    }

    /// A daemon that exited without being killed by us crashed (or quit): a violation, and it is
    /// started again.
    func noticeDaemonExit() {
        guard let exit = daemon.exit else { return }
        violation("the daemon exited by itself (\(exit)); its log ends:\n\(daemon.logTail())")
        daemon.forget()
        daemonReady = false
        events = nil
        do {
            try startDaemon()
        } catch {
            violation("cannot start the daemon again: \(error)")
            finish()
        }
    }

    /// SIGKILL now; started again after up to 2 s during which the churn goes on (streams end, the
    /// user changes levels, with nobody to repair them until the next start).
    func killDaemon(now: UInt64) {
        daemon.kill()
        daemon.forget()
        report.daemonKills += 1
        daemonReady = false
        events = nil
        let down = UInt64(Double.random(in: 0...2, using: &random) * 1_000_000)
        daemonDownUntil = now + down
        poll?.schedule(at: now + down)
        nextKill = plan.killInterval > 0 ? now + random.around(seconds: plan.killInterval) : .max
        say(String(printf: "%7.1fs  daemon killed (SIGKILL), %.1f s down", elapsed, Double(down) / 1e6))
        trace("daemon killed")
    }

    /// Runs the restart command (the loop waits for it: every stream goes with the server anyway),
    /// then waits for the mixer and the daemon to be connected again.
    func restartServer() {
        guard let command = plan.restartServerCommand else { return }
        say(String(printf: "%7.1fs  restarting the sound server", elapsed))
        trace("server restart")
        for app in apps.values {
            app.quit(abruptly: true)
            report.lostToRestarts += 1
        }
        apps.removeAll()
        uncorkAt.removeAll()
        appOfStream.removeAll()
        levels.serverGone()
        let logPath = plan.folder + "/restart.log"
        let exit: ChildProcess.Exit?
        do {
            exit = try ChildProcess(["/bin/sh", "-c", command], environment: ProcessInfo.processInfo.environment,
                                    log: logPath).wait(timeout: 60)
        } catch {
            violation("cannot run the restart command: \(error)")
            return finish()
        }
        guard exit == .code(0) else {
            violation("the restart command `\(command)` failed (\(exit.map(String.init(describing:)) ?? "still running after 60 s")); see \(logPath)")
            return finish()
        }
        report.serverRestarts += 1
        let now = MainLoop.monotonicMicroseconds()
        nextRestart = now + random.around(seconds: plan.restartInterval)
        daemonReady = false
        phase = .reconnecting
        poll?.schedule(after: 100_000)
    }

    /// After a restart: churn again once the mixer has the new server's streams and the daemon is
    /// connected to it.
    func reconnected() {
        guard case .reconnecting = phase, mixer.isReady, daemonReady else { return }
        say(String(printf: "%7.1fs  server back: ", elapsed) + (mixer.serverDescription ?? "?"))
        phase = .churning
        tick?.schedule(after: 0)
    }
}
