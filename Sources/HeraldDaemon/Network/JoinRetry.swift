/// When to try again the multicast joins that failed: 5 s after the first failed scan, then twice as long
/// each time, up to a minute; back to 5 s once every join has worked.
struct JoinRetry {
    static let firstDelay: Int64 = 5_000
    static let longestDelay: Int64 = 60_000

    /// When the next retry is due (monotonic milliseconds), or nil when no join is failing.
    private(set) var dueAt: Int64?
    private var delay = JoinRetry.firstDelay

    /// Notes the end of an interface scan at `now`.
    mutating func scan(finishedWithFailures failing: Bool, at now: Int64) {
        guard failing else {
            (dueAt, delay) = (nil, Self.firstDelay)
            return
        }
        // A scan that an interface change started before the retry was due leaves the retry's time alone.
        if let dueAt, dueAt > now { return }
        dueAt = now + delay
        delay = min(delay * 2, Self.longestDelay)
    }
}
