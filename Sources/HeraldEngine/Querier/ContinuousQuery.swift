import HeraldWire

/// One question that operations keep asking on one link (RFC 6762 §5.2): when to ask next, and how
/// far the back-off has gone. Its key is the querier's table's: a resolve asks four of these on each link, so
/// this is kept small (40 bytes, and no allocation for a question one operation asks).
struct ContinuousQuery: Sendable {
    /// When the first query may go out at the earliest (the shortest first-query delay after the question was
    /// asked): it may leave before `nextQueryAt` with another question's first query, never before this.
    let firstQueryEarliest: Instant
    private var next: Instant
    private var last = Self.never
    var subscribers: Subscribers
    /// True for questions whose answers are unique records (SRV, TXT, addresses): once one is cached, the
    /// querier relies on refreshes instead of back-off queries.
    let expectsUniqueAnswer: Bool
    /// `interval` in milliseconds: at most an hour, so 32 bits, which fit after the flag and the subscriber's tag
    /// (40 bytes in all, not 48).
    private var intervalMilliseconds = Int32(MDNSConstants.queryIntervalInitial)

    /// Stands for nil in `next` and `last`.
    private static let never = Instant(milliseconds: .min)

    init(key: RecordKey, subscriber: OperationID, firstQueryAt: Instant, earliest: Instant) {
        self.next = firstQueryAt
        self.firstQueryEarliest = earliest
        self.subscribers = .one(subscriber)
        self.expectsUniqueAnswer = key.type == .srv || key.type == .txt || key.type == .a || key.type == .aaaa
    }

    /// The wait after the next query: 1 s after the first, then at least doubling, capped at one hour.
    var interval: Int {
        get { Int(intervalMilliseconds) }
        set { intervalMilliseconds = Int32(newValue) }
    }

    /// When the next back-off query is due, or nil once answered (unique answers) or stopped.
    var nextQueryAt: Instant? {
        get { next == Self.never ? nil : next }
        set { next = newValue ?? Self.never }
    }

    var lastSentAt: Instant? { last == Self.never ? nil : last }

    /// True while the first query waits for its delay and could join another first query at `now`.
    func canJoinFirstQuery(at now: Instant) -> Bool {
        lastSentAt == nil && nextQueryAt != nil && firstQueryEarliest <= now
    }

    /// Records that the query was sent (by us, or by a peer asking the same thing) at `now`.
    mutating func markSent(at now: Instant) {
        last = now
        moveBackOff(from: now)
    }

    /// The question is not asked at `now` because its owner says no answer exists until `end` (an NSEC record,
    /// RFC 6762 §6.1): the back-off moves on as if it had been asked, and the next query waits for `end`.
    mutating func holdBack(at now: Instant, until end: Instant) {
        moveBackOff(from: now)
        nextQueryAt = max(nextQueryAt ?? end, end)
    }

    private mutating func moveBackOff(from now: Instant) {
        nextQueryAt = now + interval
        interval = min(interval * 2, MDNSConstants.queryIntervalMax)
    }

    /// The operations asking a question: nearly always one, kept without a set of its own.
    enum Subscribers: Sendable {
        case one(OperationID)
        case many(Set<OperationID>)

        mutating func insert(_ operation: OperationID) {
            switch self {
            case .one(let only) where only == operation: return
            case .one(let only): self = .many([only, operation])
            case .many(var set):
                self = .one(operation)  // the set is uniquely referenced while it grows
                set.insert(operation)
                self = .many(set)
            }
        }

        /// Removes `operation`; false when none is left.
        mutating func remove(_ operation: OperationID) -> Bool {
            switch self {
            case .one(let only): return only != operation
            case .many(var set):
                self = .one(operation)
                set.remove(operation)
                if set.count == 1, let only = set.first {
                    self = .one(only)
                } else {
                    self = .many(set)
                }
                return !set.isEmpty
            }
        }

        /// The operations, in order.
        var sorted: [OperationID] {
            switch self {
            case .one(let only): return [only]
            case .many(let set): return set.sorted()
            }
        }

        var asSet: Set<OperationID> {
            switch self {
            case .one(let only): return [only]
            case .many(let set): return set
            }
        }
    }
}
