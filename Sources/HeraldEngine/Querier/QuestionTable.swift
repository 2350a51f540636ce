import HeraldWire

/// One link's continuous questions, by key: the keys and questions in two dense arrays, found through an
/// open-addressing index of their positions (``SlotTable``, 8 bytes a bucket).
///
/// A `Dictionary` keeps a key and a question in every bucket of a table at most three quarters full: the office
/// benchmark's 2,000 resolves ask 4,000 questions on each link, which took 8,192 buckets of 64 bytes (512 KiB a
/// link); here they take 4,000 entries of 64 bytes and 8,192 of 8. Positions in the arrays are not an order anyone
/// sees: the querier sorts what it sends.
///
/// The table also keeps an instant no later than any question's next query (``earliestQueryBound``), lowered on every
/// change and made exact by the querier after it sent what was due: a tick with nothing due, or a look for the next
/// deadline, then costs one comparison instead of a pass over every question (40,000 at ten times the office load).
struct QuestionTable: Sendable {
    private(set) var keys: [RecordKey] = []
    private(set) var values: [ContinuousQuery] = []
    private var index = SlotTable<Void>(vacant: ())
    /// No later than the earliest `nextQueryAt` of the questions; `distantFuture` when none has one. It may be early
    /// (a question moved later or removed), which costs a look with nothing due, never a late query.
    private(set) var earliestQueryBound = Instant.distantFuture

    var isEmpty: Bool { keys.isEmpty }

    /// True when a question is asked under `key`.
    func contains(_ key: RecordKey) -> Bool { position(of: key) != nil }

    /// The question asked under `key`; setting nil removes it.
    subscript(key: RecordKey) -> ContinuousQuery? {
        get { position(of: key).map { values[$0.slot] } }
        set {
            if let next = newValue?.nextQueryAt, next < earliestQueryBound { earliestQueryBound = next }
            if let found = position(of: key) {
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
        let result = body(&values[slot])
        if let next = values[slot].nextQueryAt, next < earliestQueryBound { earliestQueryBound = next }
        return result
    }

    /// Makes ``earliestQueryBound`` exact: one pass over the questions.
    mutating func findEarliestQuery() {
        var earliest = Instant.distantFuture
        for query in values {
            if let next = query.nextQueryAt, next < earliest { earliest = next }
        }
        earliestQueryBound = earliest
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
