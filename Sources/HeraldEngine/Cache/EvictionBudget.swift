/// How many records nobody asks for a full cache may still take in, each in the place of another record nobody asks
/// for: a token bucket refilled at `perSecond` and holding at most a second's worth. A flood of junk then costs the
/// cache a lookup per record beyond the budget, not an eviction; a quiet LAN never notices it.
struct EvictionBudget: Sendable {
    /// Evictions allowed per second, and at most at once.
    let perSecond: Int
    /// Thousandths of an eviction, so that refills of a few milliseconds add up exactly.
    private var milliEvictions: Int
    private var updatedAt = Instant.zero

    init(perSecond: Int) {
        self.perSecond = max(1, perSecond)
        milliEvictions = self.perSecond * 1000
    }

    /// True when an eviction may happen at `now` (it is counted by ``spend()``).
    mutating func allows(at now: Instant) -> Bool {
        if now > updatedAt {
            let elapsed = min(now - updatedAt, 1000)
            milliEvictions = min(perSecond * 1000, milliEvictions + elapsed * perSecond)
            updatedAt = now
        }
        return milliEvictions >= 1000
    }

    /// Counts an eviction ``allows(at:)`` allowed.
    mutating func spend() {
        milliEvictions -= 1000
    }
}
