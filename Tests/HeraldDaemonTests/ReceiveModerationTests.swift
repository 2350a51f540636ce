import HeraldDaemon
import Testing

@Suite("Reading a flood in batches")
struct ReceiveModerationTests {
    @Test("a LAN below the busy rate never pauses; a flood pauses after every read; quiet again, no pause")
    func pausesOnlyUnderAFlood() {
        var moderation = ReceiveModeration(busyRate: 2000, window: 100, pause: 1)
        // 100 packets a second, one at a time: never a pause.
        var now: Int64 = 0
        for _ in 0..<300 {
            #expect(moderation.noteRead(packets: 1, at: now) == 0)
            now += 10
        }
        #expect(!moderation.isBusy)
        // 20,000 a second, in reads of 20 a millisecond: the first window is only counted, every read after it
        // pauses.
        var pauses: [Int] = []
        for _ in 0..<300 {
            pauses.append(moderation.noteRead(packets: 20, at: now))
            now += 1
        }
        #expect(pauses.prefix(100).allSatisfy { $0 == 0 })
        #expect(pauses.dropFirst(101).allSatisfy { $0 == 1 })
        #expect(moderation.isBusy)
        // A read that found nothing does not pause.
        #expect(moderation.noteRead(packets: 0, at: now) == 0)
        // The flood ends: after a quiet window the next packet is read at once.
        now += 250
        #expect(moderation.noteRead(packets: 1, at: now) == 0)
        #expect(!moderation.isBusy)
    }

    @Test("just below the busy rate does not pause; at it, it does")
    func threshold() {
        var below = ReceiveModeration(busyRate: 2000, window: 100, pause: 1)
        var at = ReceiveModeration(busyRate: 2000, window: 100, pause: 1)
        for ms in stride(from: Int64(0), to: 100, by: 1) {
            _ = below.noteRead(packets: ms < 99 ? 2 : 1, at: ms)  // 199 in the window
            _ = at.noteRead(packets: 2, at: ms)  // 200 in the window
        }
        #expect(below.noteRead(packets: 1, at: 100) == 0)
        #expect(at.noteRead(packets: 1, at: 100) == 1)
    }
}
