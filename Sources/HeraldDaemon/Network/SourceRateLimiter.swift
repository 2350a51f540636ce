import HeraldEngine

/// A token bucket per sending address: each source may send `burst` packets at once and `rate` packets per
/// second after that; the rest are dropped before they reach the engine, so one noisy or hostile host
/// cannot starve the others. The table of sources is bounded; the least recently heard are forgotten.
package struct SourceRateLimiter: Sendable {
    package let rate: Int
    package let burst: Int
    package let maximumSources: Int

    private struct Bucket {
        var tokens: Double
        var updated: Instant
    }

    private var buckets: [IPAddress: Bucket] = [:]
    /// Packets dropped since the last call to ``takeDropped()``, per source.
    private var dropped: [IPAddress: Int] = [:]

    package init(rate: Int, burst: Int, maximumSources: Int = 4096) {
        self.rate = max(1, rate)
        self.burst = max(1, burst)
        self.maximumSources = max(1, maximumSources)
    }

    /// True when a packet from `source` at `now` may be processed.
    package mutating func admit(_ source: IPAddress, at now: Instant) -> Bool {
        var bucket = buckets[source] ?? Bucket(tokens: Double(burst), updated: now)
        let elapsed = max(0, now - bucket.updated)
        bucket.tokens = min(Double(burst), bucket.tokens + Double(elapsed) * Double(rate) / 1000)
        bucket.updated = now
        let admitted = bucket.tokens >= 1
        if admitted { bucket.tokens -= 1 } else { dropped[source, default: 0] += 1 }
        if buckets[source] == nil && buckets.count >= maximumSources { forgetOldest() }
        buckets[source] = bucket
        return admitted
    }

    /// The sources that had packets dropped, and how many, since the last call.
    package mutating func takeDropped() -> [IPAddress: Int] {
        defer { dropped.removeAll() }
        return dropped
    }

    /// The number of sources being tracked.
    package var trackedSources: Int { buckets.count }

    /// Forgets the least recently heard half of the table at once, so that a flood of ever-new (spoofed)
    /// sources costs amortised O(log n) per packet rather than a scan each time.
    private mutating func forgetOldest() {
        let ordered = buckets.sorted { $0.value.updated < $1.value.updated }
        for entry in ordered.prefix(max(1, buckets.count / 2)) { buckets[entry.key] = nil }
    }
}
