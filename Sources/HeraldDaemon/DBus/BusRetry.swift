/// When heraldd tries the system bus again while it is away (not there yet, or its daemon restarting): one second
/// after it went, then twice as long each time, ten seconds at most (docs/dbus-api.md, "Where it is served").
struct BusRetry {
    static let firstDelay: Int64 = 1000
    static let longestDelay: Int64 = 10_000
    private var delay = BusRetry.firstDelay

    /// The wait before the next attempt; each call doubles the one after, up to ``longestDelay``.
    mutating func nextDelay() -> Int64 {
        defer { delay = min(delay * 2, Self.longestDelay) }
        return delay
    }

    /// The bus is back: the next time it goes, attempts start at ``firstDelay`` again.
    mutating func reset() { delay = Self.firstDelay }
}
