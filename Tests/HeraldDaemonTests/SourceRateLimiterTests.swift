import HeraldDaemon
import HeraldEngine
import HeraldWire
import Testing

@Suite("Per-source rate limit")
struct SourceRateLimiterTests {
    let noisy = IPAddress.v4(IPv4Address(10, 0, 0, 66))
    let quiet = IPAddress.v4(IPv4Address(10, 0, 0, 7))

    @Test("a flood from one host is cut to the burst, then to the rate, while another host is untouched")
    func floodIsLimited() {
        var limiter = SourceRateLimiter(rate: 100, burst: 20)
        var admitted = 0
        for _ in 0..<1000 where limiter.admit(noisy, at: Instant(milliseconds: 0)) { admitted += 1 }
        #expect(admitted == 20)
        let quietAdmitted = limiter.admit(quiet, at: Instant(milliseconds: 0))
        #expect(quietAdmitted)
        // Half a second later 50 more tokens have accumulated, no more.
        var later = 0
        for _ in 0..<1000 where limiter.admit(noisy, at: Instant(milliseconds: 500)) { later += 1 }
        #expect(later == 20)  // refilled to the burst cap, not beyond
        var afterTenMilliseconds = 0
        for _ in 0..<1000 where limiter.admit(noisy, at: Instant(milliseconds: 510)) { afterTenMilliseconds += 1 }
        #expect(afterTenMilliseconds == 1)
        #expect(limiter.takeDropped()[noisy] == 980 + 980 + 999)
        #expect(limiter.takeDropped().isEmpty)
    }

    @Test("the table of sources stays bounded under a flood of spoofed addresses")
    func boundedSources() {
        var limiter = SourceRateLimiter(rate: 10, burst: 10, maximumSources: 100)
        for index in 0..<10_000 {
            _ = limiter.admit(.v4(IPv4Address(UInt32(0x0A00_0000 + index))), at: Instant(milliseconds: Int64(index)))
        }
        #expect(limiter.trackedSources <= 100)
        #expect(limiter.trackedSources >= 50)
    }
}
