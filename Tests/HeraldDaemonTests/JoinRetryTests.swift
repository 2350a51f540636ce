import Testing

@testable import HeraldDaemon

@Suite("Retrying failed multicast joins")
struct JoinRetryTests {
    @Test("nothing is due while every join works")
    func idleWhenJoined() {
        var retry = JoinRetry()
        retry.scan(finishedWithFailures: false, at: 1_000)
        #expect(retry.dueAt == nil)
    }

    @Test("failing scans are retried after 5 s, then twice as long each time, up to a minute")
    func backsOff() throws {
        var retry = JoinRetry()
        var now: Int64 = 0
        var delays: [Int64] = []
        for _ in 0..<7 {
            retry.scan(finishedWithFailures: true, at: now)
            let due = try #require(retry.dueAt)
            delays.append(due - now)
            now = due
        }
        #expect(delays == [5_000, 10_000, 20_000, 40_000, 60_000, 60_000, 60_000])
    }

    @Test("a scan an interface change starts before the retry is due keeps the retry's time")
    func changesDoNotPostpone() {
        var retry = JoinRetry()
        retry.scan(finishedWithFailures: true, at: 0)
        retry.scan(finishedWithFailures: true, at: 3_000)
        #expect(retry.dueAt == 5_000)
    }

    @Test("once every join has worked, a new failure is retried after 5 s again")
    func resetsAfterSuccess() {
        var retry = JoinRetry()
        retry.scan(finishedWithFailures: true, at: 0)
        retry.scan(finishedWithFailures: true, at: 5_000)
        retry.scan(finishedWithFailures: false, at: 15_000)
        #expect(retry.dueAt == nil)
        retry.scan(finishedWithFailures: true, at: 20_000)
        #expect(retry.dueAt == 25_000)
    }
}
