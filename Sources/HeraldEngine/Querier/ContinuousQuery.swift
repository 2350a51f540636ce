import HeraldWire

/// One question that operations keep asking on one link (RFC 6762 §5.2): when to ask next, and how
/// far the back-off has gone.
struct ContinuousQuery: Sendable {
    let key: RecordKey
    let link: LinkID
    var subscribers: Set<OperationID> = []
    /// When the next back-off query is due, or nil once answered (unique answers) or stopped.
    var nextQueryAt: Instant?
    /// The wait after the next query: 1 s after the first, then at least doubling, capped at one hour.
    var interval = MDNSConstants.queryIntervalInitial
    var lastSentAt: Instant?
    /// The earliest the first query may go out (the shortest first-query delay after the question was asked):
    /// it may leave before `nextQueryAt` with another question's first query, never before this.
    let firstQueryEarliest: Instant

    init(key: RecordKey, link: LinkID, firstQueryAt: Instant, earliest: Instant) {
        self.key = key
        self.link = link
        self.nextQueryAt = firstQueryAt
        self.firstQueryEarliest = earliest
    }

    /// True while the first query waits for its delay and could join another first query at `now`.
    func canJoinFirstQuery(at now: Instant) -> Bool {
        lastSentAt == nil && nextQueryAt != nil && firstQueryEarliest <= now
    }

    /// True for questions whose answers are unique records (SRV, TXT, addresses): once one is cached, the
    /// querier relies on refreshes instead of back-off queries.
    var expectsUniqueAnswer: Bool {
        key.type == .srv || key.type == .txt || key.type == .a || key.type == .aaaa
    }

    /// Records that the query was sent (by us, or by a peer asking the same thing) at `now`.
    mutating func markSent(at now: Instant) {
        lastSentAt = now
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
}
