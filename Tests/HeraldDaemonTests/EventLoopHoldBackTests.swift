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

    @Test(
        "a descriptor unregistered while held back leaves nothing behind: a new one under the same number keeps its own events"
    )
    func unregisteredLeavesNothing() throws {
        let loop = try EventLoop()
        let held = readyPipe()
        loop.holdBack(held.read, watching: .readable, forMilliseconds: 0)  // not registered: ignored
        try loop.register(held.read, for: .readable) { _ in }
        loop.holdBack(held.read, watching: .readable, forMilliseconds: 10)
        loop.unregister(held.read)
        close(held.read)
        close(held.write)
        // The next pipe gets the same descriptor number, registered for writability only (a pipe's read end never
        // is writable), with a byte waiting to be read.
        let reused = readyPipe()
        defer { for fd in [reused.read, reused.write] { close(fd) } }
        try #require(reused.read == held.read)
        var handled = 0
        try loop.register(reused.read, for: .writable) { _ in handled += 1 }
        var turns = 0
        let end = MonotonicClock.milliseconds() + 40
        loop.run(nextDeadline: { end }) {
            turns += 1
            loop.stop()
        }
        // Had the hold-back outlived its descriptor, its end at 10 ms would have made the new one watched for reading.
        #expect(turns == 1)
        #expect(handled == 0)
    }
}
