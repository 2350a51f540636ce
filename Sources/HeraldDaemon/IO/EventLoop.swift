import CHeraldSystem

#if canImport(Glibc)
    import Glibc
#endif

/// A single-threaded epoll loop: file descriptors with callbacks, and one deadline supplied by the owner.
///
/// Everything the daemon does runs on the loop's thread, so the protocol engine and the client tables need
/// no locks. Other threads talk to it only through file descriptors (signalfd, eventfd).
package final class EventLoop {
    package struct Events: OptionSet, Sendable {
        package let rawValue: UInt32
        package init(rawValue: UInt32) { self.rawValue = rawValue }
        package static let readable = Events(rawValue: herald_epollin())
        package static let writable = Events(rawValue: herald_epollout())
    }

    private let epollFD: Int32
    private var handlers: [Int32: (Events) -> Void] = [:]
    private var running = false
    /// How many times a descriptor's handler has run: a count that moves when the loop handled I/O.
    package private(set) var handledEvents: UInt64 = 0
    /// Descriptors not watched for a moment (``holdBack(_:watching:forMilliseconds:)``): the events to watch again,
    /// and the monotonic millisecond to do it at.
    private var heldBack: [Int32: (events: Events, until: Int64)] = [:]

    package init() throws(SystemError) {
        let fd = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard fd >= 0 else { throw SystemError("epoll_create1") }
        epollFD = fd
    }

    deinit { close(epollFD) }

    /// Watches `fd`; `handler` runs on the loop with the events that occurred (errors and hang-ups count as readable).
    package func register(_ fd: Int32, for events: Events, handler: @escaping (Events) -> Void) throws(SystemError) {
        guard herald_epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, events.rawValue) == 0 else {
            throw SystemError("epoll_ctl(ADD)")
        }
        handlers[fd] = handler
    }

    /// Changes the events watched for `fd`.
    package func modify(_ fd: Int32, for events: Events) {
        _ = herald_epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, events.rawValue)
    }

    /// Stops watching `fd` (the caller closes it).
    package func unregister(_ fd: Int32) {
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
        handlers[fd] = nil
        heldBack[fd] = nil
    }

    /// Runs until ``stop()``. Before each wait, `nextDeadline` gives the monotonic millisecond at which
    /// `onDeadline` must run (nil: no deadline).
    package func run(nextDeadline: () -> Int64?, onDeadline: () -> Void) {
        running = true
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        while running {
            var timeout: Int32 = -1
            if let deadline = nextDeadline() {
                timeout = Int32(clamping: max(0, deadline - MonotonicClock.milliseconds()))
            }
            if !heldBack.isEmpty {
                let now = MonotonicClock.milliseconds()
                for (fd, held) in heldBack where held.until <= now {
                    heldBack[fd] = nil
                    modify(fd, for: held.events)
                }
                if let first = heldBack.values.map(\.until).min() {
                    let wait = Int32(clamping: max(0, first - now))
                    timeout = timeout < 0 ? wait : min(timeout, wait)
                }
            }
            let count = epoll_wait(epollFD, &events, Int32(events.count), timeout)
            if count < 0 {
                if errno == EINTR { continue }
                break
            }
            for index in 0..<Int(count) {
                let fd = herald_epoll_event_fd(&events[index])
                let mask = herald_epoll_event_mask(&events[index])
                var happened = Events(rawValue: mask & (herald_epollin() | herald_epollout()))
                if mask & (herald_epollerr() | herald_epollhup()) != 0 { happened.insert(.readable) }
                handledEvents &+= 1
                handlers[fd]?(happened)
            }
            if let deadline = nextDeadline(), deadline <= MonotonicClock.milliseconds() { onDeadline() }
        }
    }

    /// Stops watching `fd` for `milliseconds`, then watches it for `events` again: what arrives meanwhile gathers,
    /// and one turn of the loop handles it together, while every other descriptor is served as usual. Under a flood
    /// of packets this spares a wake-up per packet (``ReceiveModeration``).
    package func holdBack(_ fd: Int32, watching events: Events, forMilliseconds milliseconds: Int) {
        guard handlers[fd] != nil, heldBack[fd] == nil else { return }
        modify(fd, for: [])
        heldBack[fd] = (events, MonotonicClock.milliseconds() + Int64(milliseconds))
    }

    /// Makes ``run(nextDeadline:onDeadline:)`` return after the current iteration.
    package func stop() { running = false }

    /// Takes the event being handled out of ``handledEvents``: it did nothing that counts as work (a retry of
    /// something still absent), so it must not make the loop look busy to ``IdlePages``.
    package func discountCurrentEvent() { handledEvents &-= 1 }
}

/// The monotonic clock the daemon drives its engine with.
package enum MonotonicClock {
    package static func milliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}

/// A failed system call, with errno and its text.
package struct SystemError: Error, CustomStringConvertible, Sendable {
    package let call: String
    package let code: Int32

    package init(_ call: String, code: Int32 = errno) {
        self.call = call
        self.code = code
    }

    package var description: String { "\(call): \(String(cString: strerror(code))) (errno \(code))" }
}
