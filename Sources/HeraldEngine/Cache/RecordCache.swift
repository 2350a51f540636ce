import HeapModule
import HeraldWire

/// One cached record and what the querier needs to know about it.
public struct CachedRecord: Sendable {
    /// The record as received (its TTL is the one it arrived with).
    public var record: ResourceRecord
    public var receivedAt: Instant
    /// When the record leaves the cache unless refreshed.
    public var expiresAt: Instant
    /// Who sent it (nil for this host's own records).
    public var source: IPAddress?
    /// True for this host's own published records, which never expire from the cache on their own.
    public var isLocal: Bool
    /// This record's share of the refresh jitter, in hundredths of a percent of the TTL (0–200).
    var refreshJitter: UInt8
    /// How many of the refresh queries at 80/85/90/95 % of the TTL have been sent (RFC 6762 §5.2).
    var refreshesSent: UInt8 = 0
    /// A hash of the record's data, so that finding a record in its set compares integers first.
    var dataHash: Int32 = 0

    /// Milliseconds of life left at `now`.
    public func remaining(at now: Instant) -> Int { max(0, expiresAt - now) }

    /// The TTL left at `now`, in whole seconds, as it would be sent in a known-answer list.
    public func remainingTTL(at now: Instant) -> UInt32 { UInt32(remaining(at: now) / 1000) }

    /// The instant a refresh query is due (80, 85, 90, 95 % of the TTL, each plus a jitter of up to 2 %),
    /// or nil after the fourth.
    var nextRefresh: Instant? {
        guard !isLocal, refreshesSent < 4, record.ttl > 0 else { return nil }
        let hundredths = MDNSConstants.refreshPercentages[Int(refreshesSent)] * 100 + Int(refreshJitter)
        return receivedAt + Int(Int64(record.ttl) * Int64(hundredths) / 10)  // ttl s × hundredths/10000 × 1000 ms
    }
}

/// A change the cache made that operations may need to hear about.
public enum CacheChange: Sendable, Hashable {
    case added(ResourceRecord)
    case removed(ResourceRecord)
}

/// The records learnt on one link (RFC 6762 §10), bounded in size.
///
/// Records are grouped by record set. Expiry runs off a heap of deadlines with at most one live entry per
/// set. When full, the cache evicts the remote record closest to expiry, so a flood of short-lived junk
/// pushes out itself rather than the records people are using.
public struct RecordCache: Sendable {
    /// The most records kept (own records included).
    public let limit: Int
    public private(set) var count = 0

    private struct RecordSet {
        var records: [CachedRecord] = []
        /// The deadline of this set's live heap entry.
        var scheduledExpiry: Instant?
    }

    private struct Deadline: Comparable {
        var at: Instant
        var key: RecordKey
        static func < (lhs: Deadline, rhs: Deadline) -> Bool { lhs.at < rhs.at }
        static func == (lhs: Deadline, rhs: Deadline) -> Bool { lhs.at == rhs.at && lhs.key == rhs.key }
    }

    private var sets: [RecordKey: RecordSet] = [:]
    /// The sets of each name, for questions of type or class ANY.
    private var keysByName: [DNSName: Set<RecordKey>] = [:]
    private var deadlines = Heap<Deadline>()

    public init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Every cached record, in no particular order.
    public var allRecords: [CachedRecord] { sets.values.flatMap(\.records) }

    /// The records of one set (no ANY).
    public func records(for key: RecordKey) -> [CachedRecord] { sets[key]?.records ?? [] }

    /// The records answering a question (ANY type or class matches every set of the name).
    public func answers(to question: RecordKey) -> [CachedRecord] {
        if question.type != .any && question.recordClass != .any { return records(for: question) }
        var result: [CachedRecord] = []
        for key in keysByName[question.name] ?? [] where key.isAnswered(byQuestionFor: question) {
            result += sets[key]?.records ?? []
        }
        return result
    }

    /// The earliest instant at which something expires.
    public var nextExpiry: Instant? { deadlines.min?.at }

    /// Adds or refreshes a record received at `now` (RFC 6762 §10.1–10.2): TTL 0 schedules removal one
    /// second later; the cache-flush bit ends, one second later, every other record of the set that
    /// arrived more than a second ago.
    /// `refreshJitter` (0–200, in hundredths of a percent) spreads this record's refresh queries. `isWanted` says
    /// which record sets some operation is asking for: when the cache is full they are the last to go.
    public mutating func insert(_ incoming: ResourceRecord, from source: IPAddress?, at now: Instant,
                                isLocal: Bool = false, refreshJitter: Int = 0,
                                isWanted: (RecordKey) -> Bool = { _ in false }) -> [CacheChange] {
        // Names in blocks of their own: a cached record (and its set's key) must not keep the whole packet alive.
        let incoming = incoming.compacted()
        let key = RecordKey(incoming)
        // Taken out of the dictionary while it changes, so that its records array is not copied on write.
        var set = sets.removeValue(forKey: key) ?? RecordSet()
        var changes: [CacheChange] = []
        let graceEnd = now + MDNSConstants.cacheFlushGrace

        if incoming.cacheFlush && incoming.ttl > 0 {
            // Our own announcements flush stale remote members too; but this host's own records are withdrawn by
            // their owner, never flushed.
            set.records.withUnsafeMutableBufferPointer { records in
                for index in records.indices
                where !records[index].isLocal && records[index].record.data != incoming.data
                    && now - records[index].receivedAt > MDNSConstants.cacheFlushGrace && records[index].expiresAt > graceEnd
                {
                    records[index].expiresAt = graceEnd
                }
            }
        }

        let incomingHash = Self.dataHash(incoming.data)
        if let index = Self.index(of: incoming, hash: incomingHash, in: set.records) {
            if incoming.ttl == 0 {
                // Goodbye: keep it one more second (RFC 6762 §10.1); own records are withdrawn by their owner.
                if !set.records[index].isLocal || isLocal {
                    set.records[index].expiresAt = min(set.records[index].expiresAt, now + MDNSConstants.goodbyeGrace)
                }
            } else if !set.records[index].isLocal || isLocal {
                set.records[index].record = incoming
                set.records[index].receivedAt = now
                set.records[index].expiresAt = isLocal ? .distantFuture : now + Int(incoming.ttl) * 1000
                set.records[index].refreshesSent = 0
                set.records[index].source = source
                set.records[index].refreshJitter = UInt8(clamping: refreshJitter)
            }
        } else if incoming.ttl > 0 {
            let expiresAt = isLocal ? Instant.distantFuture : now + Int(incoming.ttl) * 1000
            if count >= limit {
                // Full: make room, or drop the newcomer when it is itself the junk to go.
                let keepNewcomer = isLocal || isWanted(key)
                // Eviction reads the table, so the set goes back in while it runs.
                if !set.records.isEmpty { sets[key] = set }
                set = RecordSet()
                let evicted = evictOne(except: key, newcomerExpiry: expiresAt, keepNewcomer: keepNewcomer, isWanted: isWanted)
                set = sets.removeValue(forKey: key) ?? RecordSet()
                guard evicted || isLocal else {
                    schedule(&set, key: key)
                    store(set, key: key)
                    return []
                }
            }
            var record = CachedRecord(
                record: incoming, receivedAt: now,
                expiresAt: expiresAt,
                source: source, isLocal: isLocal, refreshJitter: UInt8(clamping: refreshJitter))
            record.dataHash = incomingHash
            set.records.append(record)
            count += 1
            changes.append(.added(record.record))
        }
        schedule(&set, key: key)
        store(set, key: key)
        return changes
    }

    /// Removes this host's own record (a withdrawn registration), reporting it.
    public mutating func removeLocal(_ record: ResourceRecord) -> [CacheChange] {
        let key = RecordKey(record)
        guard var set = sets[key],
              let index = set.records.firstIndex(where: { $0.isLocal && $0.record.hasSameData(as: record) })
        else { return [] }
        let removed = set.records.remove(at: index)
        count -= 1
        store(set, key: key)
        return [.removed(removed.record)]
    }

    /// Ends the life of a record now (a peer no longer answers for it, RFC 6762 §10.5).
    public mutating func flush(_ record: ResourceRecord) -> [CacheChange] {
        let key = RecordKey(record)
        guard var set = sets[key],
              let index = set.records.firstIndex(where: { !$0.isLocal && $0.record.hasSameData(as: record) })
        else { return [] }
        let removed = set.records.remove(at: index)
        count -= 1
        store(set, key: key)
        return [.removed(removed.record)]
    }

    /// Removes every record whose time is up at `now`.
    public mutating func expire(at now: Instant) -> [CacheChange] {
        var changes: [CacheChange] = []
        while let first = deadlines.min, first.at <= now {
            _ = deadlines.removeMin()
            guard sets[first.key]?.scheduledExpiry == first.at, var set = sets.removeValue(forKey: first.key) else {
                continue  // stale entry
            }
            set.scheduledExpiry = nil
            let before = set.records.count
            for record in set.records where record.expiresAt <= now { changes.append(.removed(record.record)) }
            set.records.removeAll { $0.expiresAt <= now }
            count -= before - set.records.count
            schedule(&set, key: first.key)
            store(set, key: first.key)
        }
        return changes
    }

    /// Removes everything (the link went away), reporting each remote record.
    public mutating func removeAll() -> [CacheChange] {
        let changes = sets.values.flatMap { $0.records.map { CacheChange.removed($0.record) } }
        sets.removeAll()
        keysByName.removeAll()
        deadlines = Heap()
        count = 0
        return changes
    }

    /// Updates a cached record's querier bookkeeping.
    mutating func update(_ key: RecordKey, matching record: ResourceRecord, _ body: (inout CachedRecord) -> Void) {
        guard let index = sets[key]?.records.firstIndex(where: { $0.record.hasSameData(as: record) }) else { return }
        body(&sets[key]!.records[index])  // in place: no copy of the set's array
    }

    // MARK: - Bookkeeping

    /// The position of the record with the same data in a set (all records of a set share type and class).
    /// Written over an unsafe buffer: a `firstIndex(where:)` closure copied every cached record it looked at.
    private static func index(of record: ResourceRecord, hash: Int32, in records: [CachedRecord]) -> Int? {
        records.withUnsafeBufferPointer { buffer in
            for index in buffer.indices where buffer[index].dataHash == hash && buffer[index].record.data == record.data {
                return index
            }
            return nil
        }
    }

    /// The hash kept with each cached record (names inside the data hash case-insensitively, as they compare).
    private static func dataHash(_ data: RecordData) -> Int32 {
        var hasher = Hasher()
        hasher.combine(data)
        return Int32(truncatingIfNeeded: hasher.finalize())
    }

    private mutating func schedule(_ set: inout RecordSet, key: RecordKey) {
        // A plain loop over the buffer: a key-path map here copied every cached record on every insert.
        let earliest = set.records.withUnsafeBufferPointer { records in
            var earliest = Instant.distantFuture
            for index in records.indices where records[index].expiresAt < earliest { earliest = records[index].expiresAt }
            return earliest
        }
        guard earliest < .distantFuture else { return }
        if let scheduled = set.scheduledExpiry, scheduled <= earliest { return }
        set.scheduledExpiry = earliest
        deadlines.insert(Deadline(at: earliest, key: key))
    }

    private mutating func store(_ set: RecordSet, key: RecordKey) {
        if set.records.isEmpty {
            sets[key] = nil  // it may already be out of the table (taken out while it changed)
            keysByName[key.name]?.remove(key)
            if keysByName[key.name]?.isEmpty ?? false { keysByName[key.name] = nil }
        } else {
            if sets.updateValue(set, forKey: key) == nil { keysByName[key.name, default: []].insert(key) }
        }
    }

    /// Makes room for a newcomer (RFC 6762 §10 leaves the policy to us; a hostile or busy LAN must not exhaust
    /// memory). The victim is the remote record closest to its expiry in a set nobody is asking for, never this
    /// host's own and never from the set `protected` being added to. A newcomer nobody asks for that would
    /// expire no later than that victim is the junk itself: nothing is evicted. Sets someone asks for go only to
    /// make room for this host's own records or for other wanted ones. Returns true when a record was evicted.
    private mutating func evictOne(except protected: RecordKey, newcomerExpiry: Instant, keepNewcomer: Bool,
                                   isWanted: (RecordKey) -> Bool) -> Bool {
        var setAside: [Deadline] = []
        defer { for deadline in setAside { deadlines.insert(deadline) } }
        var fallback: RecordKey?
        while let top = deadlines.min {
            guard let set = sets[top.key], set.scheduledExpiry == top.at else {
                _ = deadlines.removeMin()  // stale
                continue
            }
            if top.key == protected || isWanted(top.key) {
                if top.key != protected && fallback == nil { fallback = top.key }
                setAside.append(deadlines.removeMin())
                continue
            }
            if !keepNewcomer && top.at >= newcomerExpiry { return false }
            _ = deadlines.removeMin()
            if evictEarliest(from: top.key, at: top.at) { return true }
        }
        if keepNewcomer, let fallback, let at = sets[fallback]?.scheduledExpiry {
            return evictEarliest(from: fallback, at: at)
        }
        return false
    }

    /// Removes the remote record of a set that expires at `at`; when the set has none (it was refreshed since
    /// its heap entry was made), schedules the set anew so that it keeps one live entry, and returns false.
    private mutating func evictEarliest(from key: RecordKey, at: Instant) -> Bool {
        guard var victim = sets.removeValue(forKey: key) else { return false }
        let index = victim.records.firstIndex { !$0.isLocal && $0.expiresAt == at }
        if let index {
            victim.records.remove(at: index)
            count -= 1
        }
        victim.scheduledExpiry = nil
        schedule(&victim, key: key)
        store(victim, key: key)
        return index != nil
    }
}

extension Instant {
    /// Later than any instant the engine will reach.
    public static let distantFuture = Instant(milliseconds: Int64.max / 4)
}
