import HeapModule
import HeraldWire
import Testing

@testable import HeraldEngine

/// The cache's own bookkeeping, below what the simulated LAN can see.
@Suite("The record cache's slots, handles and expiry heap")
struct RecordCacheTests {

    func record(_ n: Int, ttl: UInt32 = 4500) -> ResourceRecord {
        ResourceRecord(
            name: try! DNSName("host-\(n).local."), ttl: ttl, data: .a(IPv4Address(UInt32(0x0A00_0000 + n))),
            cacheFlush: true)
    }

    @Test("records dropped because the cache is full are counted: evicted ones and refused newcomers, not refreshes")
    func droppedWhenFullIsCounted() {
        var cache = RecordCache(limit: 10)
        for n in 0..<10 { _ = cache.insert(record(n, ttl: 100), at: .zero) }
        #expect(cache.count == 10)
        #expect(cache.droppedWhenFull == 0)
        // Refreshing what is cached drops nothing.
        for n in 0..<10 { _ = cache.insert(record(n, ttl: 100), at: .zero + 1) }
        #expect(cache.droppedWhenFull == 0)
        // A newcomer that outlives the cached records pushes one out.
        _ = cache.insert(record(10, ttl: 4500), at: .zero + 2)
        #expect(cache.count == 10)
        #expect(cache.droppedWhenFull == 1)
        // One that would expire before everything cached is refused: dropped too.
        _ = cache.insert(record(11, ttl: 1), at: .zero + 3)
        #expect(cache.count == 10)
        #expect(!cache.allRecords.contains { $0.record.name == record(11).name })
        #expect(cache.droppedWhenFull == 2)
    }

    @Test(
        "a full cache lets records nobody asks for take others' places a quarter of its limit a second; beyond that they are refused, with no eviction work"
    )
    func unwantedEvictionsAreBudgeted() {
        var cache = RecordCache(limit: 100)
        // Junk nobody asks for, one record a millisecond, all with the same TTL: the cache is full after 100.
        for n in 0..<100 { _ = cache.insert(record(n, ttl: 5), at: .zero + n) }
        #expect(cache.count == 100 && cache.droppedWhenFull == 0)
        // 200 more at once, each outliving the oldest: 25 take the places of the oldest, the rest are refused.
        var admitted: [Int] = []
        for n in 100..<300 where !cache.insert(record(n, ttl: 5), at: .zero + 100).isEmpty { admitted.append(n) }
        #expect(admitted == Array(100..<125))
        #expect(cache.count == 100)
        #expect(cache.droppedWhenFull == 200)
        #expect(!cache.allRecords.contains { $0.record.name == record(0).name })
        #expect(cache.allRecords.contains { $0.record.name == record(25).name })
        // Once the budget is spent, a refusal looks at no heap entry.
        let probes = cache.evictionProbes
        for n in 300..<400 { _ = cache.insert(record(n, ttl: 5), at: .zero + 100) }
        #expect(cache.evictionProbes == probes)
        #expect(cache.droppedWhenFull == 300)
        // A record an operation asks for is never held to the budget.
        let wanted = record(1000, ttl: 5)
        #expect(cache.insert(wanted, at: .zero + 400, isWanted: { _ in true }) == [.added(wanted)])
        // It fills again at 25 a second: 5 more 200 ms later, 25 (and no more) a second or more later.
        var later = 0
        for n in 2000..<2100 where !cache.insert(record(n, ttl: 5), at: .zero + 300).isEmpty { later += 1 }
        #expect(later == 5)
        later = 0
        for n in 3000..<3100 where !cache.insert(record(n, ttl: 5), at: .zero + 3000).isEmpty { later += 1 }
        #expect(later == 25)
        #expect(cache.count == 100)
    }

    @Test("refreshes that keep bringing records' ends closer leave the expiry heap bounded by the records cached")
    func heapStaysBounded() {
        var cache = RecordCache(limit: 100)
        var now = Instant.zero
        for round in 0..<20_000 {
            now = now + 1
            // Each refresh ends the record sooner than the last (a new heap entry; the one before goes stale).
            _ = cache.insert(record(round % 10, ttl: UInt32(100_000 - round)), at: now)
        }
        #expect(cache.count == 10)
        #expect(cache.deadlines.count <= 2 * cache.count + 1024)
        // Everything still expires on time: nothing before the last refresh's TTL, everything after.
        #expect(cache.expire(at: now + (100_000 - 20_000) * 1000 - 100).isEmpty)
        #expect(cache.expire(at: now + 100_000 * 1000).count == 10)
        #expect(cache.count == 0)
    }

    @Test(
        "a full cache evicts the record nobody asks for that is closest to expiry, wherever it is, and a wanted one only when none is left"
    )
    func evictionPrefersUnwantedRecords() throws {
        let limit = MDNSConstants.evictionCandidates * 4
        var cache = RecordCache(limit: limit)
        let isWanted: (RecordKey) -> Bool = { !$0.name.description.hasPrefix("junk") }
        func junk(_ n: Int, ttl: UInt32) -> ResourceRecord {
            ResourceRecord(
                name: try! DNSName("junk-\(n).local."), ttl: ttl, data: .a(IPv4Address(10, 1, 0, UInt8(n))),
                cacheFlush: true)
        }
        // One record nobody asks for, then records someone asks for, all ending before it.
        _ = cache.insert(junk(0, ttl: 5000), at: .zero, isWanted: isWanted)
        for n in 0..<(limit - 1) {
            _ = cache.insert(record(n, ttl: UInt32(100 + n)), at: .zero, isWanted: isWanted)
        }
        #expect(cache.count == limit)
        // An unwanted newcomer outliving the junk takes its place, although the junk is far from the records closest
        // to expiry.
        #expect(cache.insert(junk(1, ttl: 6000), at: .zero, isWanted: isWanted) == [.added(junk(1, ttl: 6000))])
        var names = Set(cache.allRecords.map(\.record.name))
        #expect(!names.contains(junk(0, ttl: 1).name) && names.contains(junk(1, ttl: 1).name))
        // One that would end before every unwanted record cached is the junk to go: refused.
        #expect(cache.insert(junk(2, ttl: 1000), at: .zero, isWanted: isWanted).isEmpty)
        // A wanted newcomer takes the place of the unwanted record, although that one outlives every wanted one.
        let wanted = ResourceRecord(
            name: "wanted.local.", ttl: 150, data: .a(IPv4Address(10, 1, 0, 3)), cacheFlush: true)
        #expect(cache.insert(wanted, at: .zero, isWanted: isWanted) == [.added(wanted)])
        names = Set(cache.allRecords.map(\.record.name))
        #expect(
            !names.contains(junk(1, ttl: 1).name) && names.contains("wanted.local.") && names.contains("host-0.local."))
        // With nothing unwanted left, an unwanted newcomer is refused, and a wanted one takes the place of the wanted
        // record closest to expiry.
        #expect(cache.insert(junk(3, ttl: 9000), at: .zero, isWanted: isWanted).isEmpty)
        let another = ResourceRecord(
            name: "another.local.", ttl: 150, data: .a(IPv4Address(10, 1, 0, 4)), cacheFlush: true)
        #expect(cache.insert(another, at: .zero, isWanted: isWanted) == [.added(another)])
        names = Set(cache.allRecords.map(\.record.name))
        #expect(names.contains("another.local.") && !names.contains("host-0.local."))
        #expect(cache.count == limit)
        // A record nobody asks for any more (its question ended) goes first, however long it has left.
        let last = record(limit - 2, ttl: UInt32(100 + limit - 2))
        cache.updateWanted(answering: RecordKey(last)) { _ in false }
        let third = ResourceRecord(name: "third.local.", ttl: 150, data: .a(IPv4Address(10, 1, 0, 5)), cacheFlush: true)
        #expect(cache.insert(third, at: .zero, isWanted: isWanted) == [.added(third)])
        names = Set(cache.allRecords.map(\.record.name))
        #expect(!names.contains(last.name) && names.contains("host-1.local."))
        // Evicting never loses a record's expiry: the records end on time.
        #expect(cache.expire(at: .zero + 101 * 1000) == [.removed(record(1, ttl: 101))])
    }

    @Test(
        "an eviction looks at a bounded number of records, however full of wanted records the cache is: no search of the cache per newcomer"
    )
    func evictionWorkIsBounded() throws {
        let limit = 4096
        var cache = RecordCache(limit: limit)
        let isWanted: (RecordKey) -> Bool = { !$0.name.description.hasPrefix("junk") }
        for n in 0..<limit { _ = cache.insert(record(n, ttl: UInt32(100 + n % 1000)), at: .zero, isWanted: isWanted) }
        // Ten thousand wanted newcomers, a few records nobody asks for among them: every newcomer takes a place.
        var now = Instant.zero
        for n in limit..<(limit + 10_000) {
            now = now + 1
            _ = cache.insert(record(n, ttl: UInt32(100 + n % 1000)), at: now, isWanted: isWanted)
            if n % 100 == 0 {
                let junk = ResourceRecord(
                    name: try DNSName("junk-\(n).local."), ttl: 4000, data: .a(IPv4Address(10, 2, 0, 1)),
                    cacheFlush: true)
                _ = cache.insert(junk, at: now, isWanted: isWanted)
            }
        }
        #expect(cache.count == limit)
        #expect(cache.droppedWhenFull == 10_100)
        // A heap's top per eviction, and the stale entries it meets once each: a few per newcomer, where a search of
        // candidates looked at hundreds.
        #expect(cache.evictionProbes <= 4 * 10_100, "\(cache.evictionProbes) records looked at")
        // Only wanted records are left: each junk record was the first to go when the next newcomer came.
        #expect(cache.allRecords.filter { $0.record.name.description.hasPrefix("junk") }.count <= 1)
    }

    @Test("the heap of records nobody asks for is kept only while the cache is full or has been lately")
    func unwantedHeapOnlyWhenFull() {
        var cache = RecordCache(limit: 100)
        for n in 0..<100 { _ = cache.insert(record(n, ttl: 100), at: .zero) }
        #expect(cache.unwantedDeadlines.isEmpty, "a cache that never had to evict keeps none")
        _ = cache.insert(record(100, ttl: 200), at: .zero)
        #expect(cache.count == 100 && cache.droppedWhenFull == 1)
        #expect(!cache.unwantedDeadlines.isEmpty)
        // Below half full, it is given back.
        _ = cache.expire(at: .zero + 150_000)
        #expect(cache.count == 1)
        #expect(cache.unwantedDeadlines.isEmpty)
        // Full again, it is made anew from what is cached: the record closest to expiry still goes first.
        let now = Instant.zero + 150_000
        for n in 200..<299 { _ = cache.insert(record(n, ttl: 300), at: now) }
        #expect(cache.insert(record(299, ttl: 10), at: now).isEmpty, "ends before everything cached")
        #expect(cache.insert(record(300, ttl: 400), at: now) == [.added(record(300, ttl: 400))])
        #expect(!cache.allRecords.contains { $0.record.name == record(100).name })
        #expect(cache.count == 100)
    }

    @Test(
        "a peer's NSEC says until when a type does not exist, unless another NSEC of the name lists it, or the question is of another class"
    )
    func negativeAnswers() throws {
        var cache = RecordCache(limit: 100)
        let name: DNSName = "gamma.local."
        func nsec(_ types: [RecordType], ttl: UInt32 = 120) -> ResourceRecord {
            ResourceRecord(
                name: name, ttl: ttl, data: .nsec(next: name, types: TypeBitmap(types: types)), cacheFlush: false)
        }
        _ = cache.insert(nsec([.a]), at: .zero)
        #expect(cache.negativeAnswerEnd(for: RecordKey(name: name, type: .aaaa), at: .zero) == Instant.zero + 120_000)
        #expect(cache.negativeAnswerEnd(for: RecordKey(name: name, type: .aaaa), at: .zero + 120_000) == nil, "run out")
        #expect(cache.negativeAnswerEnd(for: RecordKey(name: name, type: .a), at: .zero) == nil, "the type exists")
        #expect(
            cache.negativeAnswerEnd(for: RecordKey(name: name, type: .aaaa, recordClass: RecordClass(3)), at: .zero)
                == nil)
        _ = cache.insert(nsec([.a, .aaaa]), at: .zero + 500)
        #expect(
            cache.negativeAnswerEnd(for: RecordKey(name: name, type: .aaaa), at: .zero + 500) == nil,
            "another NSEC lists it")
        var own = RecordCache(limit: 100)
        _ = own.insert(nsec([.a]), at: .zero, isLocal: true)
        #expect(
            own.negativeAnswerEnd(for: RecordKey(name: name, type: .aaaa), at: .zero) == nil, "this host's own NSEC")
    }

    @Test("a handle names its record only: once the record is gone, its reused slot's new record is out of reach")
    func handlesOutliveNothing() throws {
        var cache = RecordCache(limit: 100)
        var changes: [CacheChange] = []
        let first = try #require(cache.insert(record(1), at: .zero, changes: &changes)?.handle)
        #expect(cache.flush(first).count == 1)
        let second = try #require(cache.insert(record(2), at: .zero, changes: &changes)?.handle)
        #expect(second.slot == first.slot)  // the freed slot is reused
        #expect(cache.flush(first).isEmpty)
        #expect(cache.records(for: RecordKey(record(2))).count == 1)
        #expect(cache.handle(of: record(2)) == second)
        #expect(cache.handle(of: record(1)) == nil)
    }

    @Test("records of one name stay in arrival order, and removing one from the middle keeps the others")
    func chainOrder() {
        var cache = RecordCache(limit: 100)
        let name: DNSName = "multi.local."
        let records = (1...4).map { ResourceRecord(name: name, ttl: 120, data: .a(IPv4Address(10, 0, 0, UInt8($0)))) }
        for record in records { _ = cache.insert(record, at: .zero) }
        #expect(cache.answers(to: RecordKey(name: name, type: .a)).map(\.record) == records)
        var changes: [CacheChange] = []
        let handle = cache.insert(records[1], at: .zero, changes: &changes)!.handle
        _ = cache.flush(handle)
        #expect(
            cache.answers(to: RecordKey(name: name, type: .any)).map(\.record) == [records[0], records[2], records[3]])
        _ = cache.insert(records[1], at: .zero)
        #expect(
            cache.answers(to: RecordKey(name: name, type: .a)).map(\.record) == [
                records[0], records[2], records[3], records[1],
            ])
    }

    @Test("a name holding thousands of records: each is found, refreshed in place and removed on its own")
    func crowdedNameIsIndexed() throws {
        var cache = RecordCache(limit: 10_000)
        let type: DNSName = "_crowd._tcp.local."
        func pointer(_ n: Int, ttl: UInt32 = 100) -> ResourceRecord {
            ResourceRecord(name: type, ttl: ttl, data: .ptr(try! DNSName("Instance \(n)._crowd._tcp.local.")))
        }
        for n in 0..<3000 { _ = cache.insert(pointer(n, ttl: n % 2 == 0 ? 10 : 100), at: .zero) }
        #expect(cache.count == 3000)
        // The same records again, their names in other letter case: refreshes, not newcomers.
        for n in 0..<3000 {
            let shouted = ResourceRecord(
                name: try DNSName("_CROWD._tcp.local."), ttl: n % 2 == 0 ? 10 : 100,
                data: .ptr(try DNSName("INSTANCE \(n)._crowd._tcp.local.")))
            #expect(cache.insert(shouted, at: .zero + 1).isEmpty)
        }
        #expect(cache.count == 3000)
        // The short-lived half expires; the rest is still found, each record by itself, in arrival order.
        #expect(cache.expire(at: .zero + 20_000).count == 1500)
        for n in 0..<3000 { #expect((cache.handle(of: pointer(n)) != nil) == (n % 2 == 1)) }
        #expect(
            cache.records(for: RecordKey(name: type, type: .ptr)).map(\.record.data)
                == (0..<1500).map { pointer(2 * $0 + 1).data })
        // Removed records leave the index and the chain: inserted again, they are newcomers at the chain's end.
        #expect(cache.insert(pointer(0), at: .zero + 30_000).count == 1)
        #expect(cache.records(for: RecordKey(name: type, type: .ptr)).last?.record.data == pointer(0).data)
        #expect(cache.removeAll().count == 1501)
        #expect(cache.handle(of: pointer(1)) == nil)
    }

    @Test("the slot tables find every entry after removals that shift others back, hashes colliding or not")
    func slotTableRemovalKeepsRuns() {
        var table = SlotTable<Int32>(vacant: -1)
        // Hashes crowded into few homes (runs that wrap around the table's end) and spread ones, mixed.
        var live: [Int32: UInt32] = [:]
        var generator = SystemRandomNumberGenerator()
        for slot in Int32(0)..<2000 {
            let hash = slot % 3 == 0 ? UInt32(63 - slot % 5) : UInt32.random(in: 0...UInt32.max, using: &generator)
            table.insert(hash: hash, slot: slot, extra: slot * 2)
            live[slot] = hash
            if slot % 4 == 1, let victim = live.keys.randomElement(using: &generator) {
                let position = table.position(of: live[victim]!) { $0 == victim }
                #expect(position != nil)
                if let position { table.remove(at: position) }
                live[victim] = nil
            }
        }
        #expect(table.count == live.count)
        for (slot, hash) in live {
            let position = table.position(of: hash) { $0 == slot }
            #expect(position.map { table[$0].extra } == slot * 2)
        }
        #expect(table.entries.count(where: { _ in true }) == live.count)
    }

    @Test("a continuous question stays within its memory budget: 48 bytes, no allocation for a single asker")
    func questionBudget() {
        // A resolve asks four questions on each link; the office benchmark's peak (Benchmarks/README.md) rests on this.
        #expect(MemoryLayout<ContinuousQuery>.stride <= 40)
        var subscribers = ContinuousQuery.Subscribers.one(OperationID(1))
        subscribers.insert(OperationID(1))
        guard case .one = subscribers else {
            Issue.record("one asker asking twice needs no set")
            return
        }
        subscribers.insert(OperationID(2))
        #expect(subscribers.sorted == [OperationID(1), OperationID(2)])
        let someLeft = subscribers.remove(OperationID(1))
        #expect(someLeft)
        guard case .one(let left) = subscribers else {
            Issue.record("back to one asker, back to no set")
            return
        }
        #expect(left == OperationID(2))
        let anyLeft = subscribers.remove(OperationID(2))
        #expect(!anyLeft)
    }

    @Test("a cached record's slot stays within its memory budget")
    func slotBudget() {
        // Every record cached costs one slot (and a heap entry): the per-record figure of the footprint benchmark
        // (Benchmarks/README.md) rests on this size. Grows only with a reason written there.
        #expect(MemoryLayout<RecordCache.Slot>.stride <= 104)
        #expect(MemoryLayout<RecordCache.Deadline>.stride <= 16)
    }
}
