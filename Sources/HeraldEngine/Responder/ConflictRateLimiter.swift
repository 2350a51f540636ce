/// RFC 6762 §8.1's brake on a host that keeps losing its names: after fifteen conflicts within ten seconds, every
/// further probe attempt waits at least five seconds, until ten seconds pass without a conflict.
struct ConflictRateLimiter: Sendable {
    private var recent: [Instant] = []
    private var limitedSince: Instant?

    /// Counts a conflict seen at `now`.
    mutating func record(at now: Instant) {
        if let last = recent.last, now - last >= MDNSConstants.conflictRateWindow { limitedSince = nil }
        recent = recent.filter { now - $0 < MDNSConstants.conflictRateWindow } + [now]
        if recent.count >= MDNSConstants.conflictRateLimitCount, limitedSince == nil { limitedSince = now }
    }

    /// True while probe attempts are being slowed down.
    func isLimited(at now: Instant) -> Bool {
        guard limitedSince != nil, let last = recent.last else { return false }
        return now - last < MDNSConstants.conflictRateWindow
    }

    /// The wait before the next probe attempt: `wanted`, or at least five seconds while limited.
    func delay(_ wanted: Int, at now: Instant) -> Int {
        isLimited(at: now) ? max(wanted, MDNSConstants.conflictRateLimitedInterval) : wanted
    }
}
