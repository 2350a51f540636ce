/// Whether the loop should let mDNS packets gather for a moment before it reads again.
///
/// Read one by one, a flood of packets costs a wake-up of the daemon each (epoll, a context switch, a read that finds
/// nothing more, the work every turn of the loop does): as much as handling the packet itself. While packets arrive
/// faster than `busyRate` a second, measured over windows of `window` ms, the socket is not read for `pause` ms after
/// each read (``EventLoop/holdBack(_:watching:forMilliseconds:)``), so that the next read finds the packets of that
/// moment together; every other descriptor (clients, the bus) is served meanwhile. On a LAN below that rate nothing
/// waits. A pause delays the handling of a packet by at most that long; mDNS responses wait 20–120 ms anyway.
package struct ReceiveModeration: Sendable {
    package let busyRate: Int
    package let window: Int64
    package let pause: Int

    private var windowStart: Int64 = 0
    private var packetsInWindow = 0
    /// True while the last full window saw packets at `busyRate` or more.
    package private(set) var isBusy = false

    package init(busyRate: Int = 2000, window: Int64 = 100, pause: Int = 1) {
        self.busyRate = busyRate
        self.window = window
        self.pause = pause
    }

    /// Notes `packets` read at `now` (monotonic ms); returns how long to leave the socket unread, in ms (0: not at all).
    package mutating func noteRead(packets: Int, at now: Int64) -> Int {
        if now - windowStart >= window {
            // A window with no read at all in it counts as quiet.
            let elapsedWindows = (now - windowStart) / window
            isBusy = elapsedWindows == 1 && Int64(packetsInWindow) * 1000 >= Int64(busyRate) * window
            windowStart = now
            packetsInWindow = 0
        }
        packetsInWindow += packets
        return isBusy && packets > 0 ? pause : 0
    }
}
