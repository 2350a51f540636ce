import HeraldBroker

/// Keeps the audit log readable, and its writes few, when callers repeat themselves: a decision that the same
/// program (same user, executable and unit, in any process) got for the same request within the last minute is not
/// written again. Name lookups through NSS and refused callers that retry in a loop would otherwise fill the log with
/// one line each. (Distinct requests are the store's business: it folds each user's decisions of one reason past a
/// hundred a minute, and keeps operator actions apart from them, so that none is pushed out; see ``AuditWriter``.)
///
/// Decisions are remembered by a 64-bit hash only, in one table: thousands of them cost one block of memory, not
/// thousands of small strings kept between the short-lived allocations of serving (which would pin heap pages).
struct AuditRepeats {
    /// How long a written decision stands for its repeats.
    static let window: Duration = .seconds(60)
    /// Distinct decisions remembered; past this the ones older than the window are forgotten (all of them, if
    /// none is).
    static let remembered = 4096

    private var lastWritten: [Int: ContinuousClock.Instant] = [:]

    /// How many decisions are remembered now.
    var count: Int { lastWritten.count }

    /// True when the decision `event` (as from a caller without a process id) is to be written at `now`, which it
    /// then stands for until the window ends.
    mutating func shouldWrite(_ event: AuditEvent, at now: ContinuousClock.Instant) -> Bool {
        let key = event.hashValue
        if let last = lastWritten[key], now - last < Self.window { return false }
        if lastWritten[key] == nil, lastWritten.count >= Self.remembered {
            lastWritten = lastWritten.filter { now - $0.value < Self.window }
            if lastWritten.count >= Self.remembered { lastWritten.removeAll(keepingCapacity: true) }
        }
        lastWritten[key] = now
        return true
    }
}
