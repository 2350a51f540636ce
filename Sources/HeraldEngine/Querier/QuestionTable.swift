import HeapModule
import HeraldWire

/// One link's continuous questions, by key: the keys and questions in two dense arrays, found through an
/// open-addressing index of their positions (``SlotTable``, 8 bytes a bucket).
///
/// A `Dictionary` keeps a key and a question in every bucket of a table at most three quarters full: the office
/// benchmark's 2,000 resolves ask 4,000 questions on each link, which took 8,192 buckets of 64 bytes (512 KiB a
/// link); here they take 4,000 entries of 64 bytes and 8,192 of 8. Positions in the arrays are not an order anyone
/// sees: the querier sorts what it sends.
///
/// The table also keeps its questions in the order of their next query (`queryTimes`), and those never asked yet
/// (`unsent`), so that finding what is due costs what is due, not one look at every question. Every change made
/// through the subscript or `modify` keeps both right.
struct QuestionTable: Sendable {
    private(set) var keys: [RecordKey] = []
    private(set) var values: [ContinuousQuery] = []
    private var index = SlotTable<Void>(vacant: ())
    /// The questions with a query pending, by `nextQueryAt`. A question whose time changes gets a new entry; its old
    /// one goes stale and is dropped when it comes up. The first entry is always live.
    private var queryTimes = Heap<QuestionDeadline>()
    /// The questions never asked yet (`lastSentAt` nil): those that may join another question's first query.
    private(set) var unsent: Set<RecordKey> = []
    /// For the querier's refresh queries: per question with cached answers, an entry no later than the first
    /// refresh due for them (see ``Querier/noteRefresh(at:of:on:isAsked:)``). Entries go stale when records are
    /// refreshed or removed; the querier checks them against the cache when they come up.
    private var refreshTimes = Heap<QuestionDeadline>()
    /// Heap and set entries looked at while finding what is due, since the table was made: the work it costs.
    var probes = 0

    var isEmpty: Bool { keys.isEmpty }

    /// True when the question asked under `key` was never sent.
    func isUnsent(_ key: RecordKey) -> Bool { unsent.contains(key) }

    /// The earliest next query of any question.
    var earliestQuery: Instant? { queryTimes.min?.at }

    /// An instant no later than the first refresh due for an answer to any question.
    var earliestRefresh: Instant? { refreshTimes.min?.at }

    /// The first refresh entry: its question, and an instant no later than its next refresh.
    var firstRefresh: QuestionDeadline? { refreshTimes.min }

    /// The question asked under `key`; setting nil removes it.
    subscript(key: RecordKey) -> ContinuousQuery? {
        get { position(of: key).map { values[$0.slot] } }
        set {
            let found = position(of: key)
            let old = found.map { Schedule(values[$0.slot]) }
            defer { reschedule(key, from: old, to: newValue.map(Schedule.init)) }
            if let found {
                if let newValue {
                    values[found.slot] = newValue
                } else {
                    remove(bucket: found.bucket, slot: found.slot)
                }
            } else if let newValue {
                index.insert(hash: Self.hash(key), slot: Int32(keys.count), extra: ())
                keys.append(key)
                values.append(newValue)
            }
        }
    }

    /// Changes the question asked under `key` in place (no copy of its subscribers); nil when there is none.
    mutating func modify<Result>(_ key: RecordKey, _ body: (inout ContinuousQuery) -> Result) -> Result? {
        guard let slot = position(of: key)?.slot else { return nil }
        let old = Schedule(values[slot])
        let result = body(&values[slot])
        reschedule(key, from: old, to: Schedule(values[slot]))
        return result
    }

    /// The questions whose next query is due at `now` (a question may be listed twice).
    mutating func questionsDue(at now: Instant) -> [RecordKey] {
        var due: [QuestionDeadline] = []
        while let first = queryTimes.min, first.at <= now {
            queryTimes.removeMin()
            probes += 1
            if isLive(first) { due.append(first) }
        }
        for entry in due { queryTimes.insert(entry) }  // live until their questions move on
        dropStaleQueryTimes()
        return due.map(\.key)
    }

    /// The questions never asked yet that may join a first query due at `now`.
    mutating func questionsJoiningFirstQuery(at now: Instant) -> [RecordKey] {
        probes += unsent.count
        var joining: [RecordKey] = []
        for key in unsent where self[key]?.canJoinFirstQuery(at: now) ?? false { joining.append(key) }
        return joining
    }

    /// Notes that a refresh may be due at `refresh` for an answer to the question asked under `key`.
    mutating func noteRefresh(at refresh: Instant, for key: RecordKey) {
        refreshTimes.insert(QuestionDeadline(at: refresh, key: key))
        if refreshTimes.count > 2 * keys.count + 1024 { compactRefreshTimes() }
    }

    /// Takes out the first refresh entry (the querier checks it against the cache).
    @discardableResult
    mutating func removeFirstRefresh() -> QuestionDeadline? {
        probes += 1
        return refreshTimes.popMin()
    }

    /// What decides where a question is in the indexes.
    private struct Schedule {
        var next: Instant?
        var isUnsent: Bool

        init(_ query: ContinuousQuery) {
            next = query.nextQueryAt
            isUnsent = query.lastSentAt == nil
        }
    }

    /// Brings the indexes up to date after the question under `key` changed from `old` to `new` (nil: absent).
    private mutating func reschedule(_ key: RecordKey, from old: Schedule?, to new: Schedule?) {
        if let next = new?.next, next != old?.next {
            queryTimes.insert(QuestionDeadline(at: next, key: key))
            if queryTimes.count > 2 * keys.count + 1024 { rebuildQueryTimes() }
        }
        if let was = old?.next, was != new?.next, queryTimes.min?.at == was { dropStaleQueryTimes() }
        let wasUnsent = old?.isUnsent ?? false
        let isUnsent = new?.isUnsent ?? false
        if isUnsent && !wasUnsent {
            unsent.insert(key)
        } else if wasUnsent && !isUnsent {
            unsent.remove(key)
        }
    }

    private func isLive(_ entry: QuestionDeadline) -> Bool { self[entry.key]?.nextQueryAt == entry.at }

    /// Drops stale entries from the top of `queryTimes`, so that its first is live.
    private mutating func dropStaleQueryTimes() {
        while let first = queryTimes.min {
            probes += 1
            if isLive(first) { return }
            queryTimes.removeMin()
        }
    }

    /// Makes `queryTimes` again from the questions, once stale entries outnumber them (it stays bounded).
    private mutating func rebuildQueryTimes() {
        var live: [QuestionDeadline] = []
        for (key, query) in zip(keys, values) {
            if let next = query.nextQueryAt { live.append(QuestionDeadline(at: next, key: key)) }
        }
        queryTimes = Heap(live)
    }

    /// Keeps only each question's earliest refresh entry, once stale entries outnumber the questions; the
    /// earliest is what a refresh must not come later than.
    private mutating func compactRefreshTimes() {
        var earliest: [RecordKey: Instant] = [:]
        for entry in refreshTimes.unordered where self[entry.key] != nil {
            earliest[entry.key] = min(earliest[entry.key] ?? entry.at, entry.at)
        }
        refreshTimes = Heap(earliest.map { QuestionDeadline(at: $0.value, key: $0.key) })
    }

    private func position(of key: RecordKey) -> (bucket: Int, slot: Int)? {
        index.position(of: Self.hash(key)) { keys[Int($0)] == key }.map { ($0, Int(index[$0].slot)) }
    }

    /// Takes out the entry at `slot` (filed at `bucket`): the last entry moves into its place.
    private mutating func remove(bucket: Int, slot: Int) {
        index.remove(at: bucket)
        let last = keys.count - 1
        if slot != last {
            let moved = index.position(of: Self.hash(keys[last])) { $0 == Int32(last) }!
            index[moved].slot = Int32(slot)
            keys[slot] = keys[last]
            values[slot] = values[last]
        }
        keys.removeLast()
        values.removeLast()
    }

    private static func hash(_ key: RecordKey) -> UInt32 {
        var hasher = Hasher()
        key.hash(into: &hasher)
        return UInt32(truncatingIfNeeded: hasher.finalize())
    }
}
