import Testing

@testable import HeraldDaemon

@Suite("Trying the system bus again while it is away")
struct BusRetryTests {
    @Test("one second, then twice as long each time, ten seconds at most; back to one second once the bus came back")
    func backsOffToTenSeconds() {
        var retry = BusRetry()
        #expect((0..<7).map { _ in retry.nextDelay() } == [1000, 2000, 4000, 8000, 10_000, 10_000, 10_000])
        retry.reset()
        #expect(retry.nextDelay() == 1000)
    }
}
