import CHeraldSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A one-shot timer on the event loop (a timerfd), for parts of the daemon that keep their own deadlines.
package final class LoopTimer {
    private let fd: Int32
    private let loop: EventLoop
    /// The monotonic millisecond the timer is armed for.
    package private(set) var deadline: Int64?

    /// `handler` runs on the loop each time the timer fires.
    package init(loop: EventLoop, handler: @escaping () -> Void) throws(SystemError) {
        let fd = herald_timerfd_create()
        guard fd >= 0 else { throw SystemError("timerfd_create") }
        self.fd = fd
        self.loop = loop
        do {
            try loop.register(fd, for: .readable) { [unowned self] _ in
                var expirations: UInt64 = 0
                _ = read(self.fd, &expirations, MemoryLayout<UInt64>.size)
                self.deadline = nil
                handler()
            }
        } catch {
            close(fd)
            throw error
        }
    }

    deinit {
        loop.unregister(fd)
        close(fd)
    }

    /// Fires at the monotonic millisecond `time` (at once if it has passed); nil disarms the timer.
    package func schedule(at time: Int64?) {
        guard time != deadline else { return }
        deadline = time
        guard let time else {
            _ = herald_timerfd_arm(fd, -1)
            return
        }
        _ = herald_timerfd_arm(fd, max(0, time - MonotonicClock.milliseconds()))
    }
}
