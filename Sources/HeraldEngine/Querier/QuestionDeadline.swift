import HeraldWire

/// An instant at which a question may have something due, in the querier's heaps: ordered by instant only. An
/// entry can go stale (its question changed or went); whoever takes it out checks it against the question.
struct QuestionDeadline: Comparable, Sendable {
    var at: Instant
    var key: RecordKey

    static func < (lhs: QuestionDeadline, rhs: QuestionDeadline) -> Bool { lhs.at < rhs.at }
}
