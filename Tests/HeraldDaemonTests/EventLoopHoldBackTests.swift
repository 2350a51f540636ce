import HeraldDaemon
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("The event loop's hold-back of one descriptor")
struct EventLoopHoldBackTests {
    /// A pipe with a byte waiting in it.
    private func readyPipe() -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0)
        var byte: UInt8 = 1
        precondition(write(fds[1], &byte, 1) == 1)
        return (fds[0], fds[1])
    }

    @Test("a held-back descriptor is not handled until its time is up, while another ready one is handled at once")
    func heldBackWaits() throws {
        let loop = try EventLoop()
        let held = readyPipe()
        let other = readyPipe()
        defer { for fd in [held.read, held.write, other.read, other.write] { close(fd) } }
        var order: [String] = []
        var heldHandledAt: Int64?
        try loop.register(held.read, for: .readable) { _ in
            var byte: UInt8 = 0
            _ = read(held.read, &byte, 1)
            order.append("held")
            heldHandledAt = MonotonicClock.milliseconds()
            loop.stop()
        }
        try loop.register(other.read, for: .readable) { _ in
            var byte: UInt8 = 0
            _ = read(other.read, &byte, 1)
            order.append("other")
        }
        let start = MonotonicClock.milliseconds()
        loop.holdBack(held.read, watching: .readable, forMilliseconds: 40)
        loop.run(nextDeadline: { nil }, onDeadline: {})
        // The other pipe went first; the held one only once its 40 ms were up, although its byte was there all along.
        #expect(order == ["other", "held"])
        #expect((heldHandledAt ?? start) - start >= 40)
    }

    @Test("a descriptor unregistered while held back is not watched again")
    func unregisteredStaysGone() throws {
        let loop = try EventLoop()
        let held = readyPipe()
        defer { for fd in [held.read, held.write] { close(fd) } }
        var handled = 0
        try loop.register(held.read, for: .readable) { _ in handled += 1 }
        loop.holdBack(held.read, watching: .readable, forMilliseconds: 5)
        loop.unregister(held.read)
        var turns = 0
        let end = MonotonicClock.milliseconds() + 30
        loop.run(nextDeadline: { end }) {
            turns += 1
            loop.stop()
        }
        #expect(turns == 1)
        #expect(handled == 0)
    }
}
