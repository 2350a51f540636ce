import HeapModule
import HeraldWire

/// A change the cache made that operations may need to hear about.
package enum CacheChange: Sendable, Hashable {
    case added(ResourceRecord)
    case removed(ResourceRecord)
}

/// The records learnt on one link (RFC 6762 §10), bounded in size.
///
/// Records live in one array of slots; the records of one name (every type) are chained through their slots in
/// the order they arrived, a table maps each name to its chain, and another each record to its slot
/// (``SlotTable``). So a cached record costs one slot, its share of the names and data it holds and of the two
/// tables (about 20 bytes), with no allocation of its own, and finding it costs two hashes, whatever else its name
/// holds.
/// Names are stored once: records of one name, and data naming a cached name, share the chain's copy.
///
/// Expiry runs off a heap of deadlines with at most one live entry per record. When full, the cache evicts the
/// remote record nobody asks for that is closest to expiry, off a second heap of those records, and only when there is
/// none the wanted record closest to expiry (``evictOne(except:newcomerExpiry:keepNewcomer:)``): a flood of
/// short-lived junk pushes out itself rather than the records people are using, and an eviction costs a heap's top,
/// not a search. Records nobody asks for take others' places at most a quarter of the limit per second
/// (``EvictionBudget``); beyond that they are refused.
package struct RecordCache: Sendable {
    /// The most records kept (own records included).
    package let limit: Int
    package private(set) var count = 0
    /// Records dropped because the cache was full: evicted to make room for a newcomer, or a newcomer refused as the
    /// record to go (``evictOne(except:newcomerExpiry:keepNewcomer:)``).
    package private(set) var droppedWhenFull = 0
    /// Heap entries looked at while choosing records to evict, since the cache was made: the work evictions cost.
    package internal(set) var evictionProbes = 0

    /// Names a cached record for as long as it stays cached: a slot, and how many times that slot was freed before.
    struct Handle: Hashable, Sendable {
        var slot: Int32
        var generation: UInt32

        func hash(into hasher: inout Hasher) {
            hasher.combine(UInt64(UInt32(bitPattern: slot)) << 32 | UInt64(generation))
        }
    }

    /// Where one record lives, linked to the previous and next records of its name.
    struct Slot: Sendable {
        var record: CachedRecord
        /// The record's hash in `index` (``CacheHash``), kept so that removing it does not hash its name and data again.
        var identity: UInt32 = 0
        /// The previous record of the name, -1 for the first, or `freeMark` for a free slot.
        var previous: Int32 = -1
        var next: Int32 = -1
        var generation: UInt32 = 0
        /// The instant of this record's live entry in `deadlines`, or `distantFuture` when it has none.
        var scheduledExpiry = Instant.distantFuture

        /// True for a slot holding no record (one of the free chain). Setting it false leaves the slot first of its
        /// name's chain until it is linked.
        var isFree: Bool {
            get { previous == Self.freeMark }
            set { previous = newValue ? Self.freeMark : -1 }
        }

        private static let freeMark: Int32 = -2
    }

    struct Deadline: Comparable, Sendable {
        var at: Instant
        var slot: Int32
        var generation: UInt32
        static func < (lhs: Deadline, rhs: Deadline) -> Bool { lhs.at < rhs.at }
    }

    var slots: [Slot] = []
    /// The first free slot; free slots are chained through `next`.
    var firstFree: Int32 = -1
    /// Each name's chain: its first slot, and its last as the extra.
    var chains = SlotTable<Int32>(vacant: -1)
    /// Each record's slot, by name, type, class and data: finding a record does not walk its name's chain.
    var index = SlotTable<Void>(vacant: ())
    var deadlines = Heap<Deadline>()
    /// The remote records nobody asks for (``CachedRecord/isWanted`` false), by expiry: the first to evict. Entries go
    /// stale when their record goes, is asked for, or is refreshed; they are checked when they come up. Kept only
    /// while the cache is full or has been lately (`keepsUnwantedDeadlines`): made from the slots when the cache
    /// first has to evict, given back once it is less than half full, so a cache that never fills pays nothing.
    var unwantedDeadlines = Heap<Deadline>()
    var keepsUnwantedDeadlines = false
    /// The last names given blocks of their own, to share with records that follow (a ring).
    private var recentNames = [DNSName](repeating: .root, count: 4)
    /// A peer's copy of a record this host publishes too (a shared PTR), by the slot of this host's copy: when this
    /// host withdraws its own, the peer's takes its place until the peer's TTL ends. Rare, so kept aside.
    private var peerCopies: [Int32: CachedRecord] = [:]
    private var nextRecentName = 0
    /// How often a record nobody asks for may still take the place of another (``EvictionBudget``).
    private var unwantedEvictions: EvictionBudget

    package init(limit: Int) {
        self.limit = max(1, limit)
        unwantedEvictions = EvictionBudget(perSecond: self.limit / MDNSConstants.unwantedEvictionsPerSecondDivisor)
    }

    // MARK: - Reading

    /// Every cached record, name by name, each name's records in the order they arrived.
    package var allRecords: [CachedRecord] {
        var result: [CachedRecord] = []
        result.reserveCapacity(count)
        for chain in chains.entries {
            var slot = chain.slot
            while slot >= 0 {
                result.append(slots[Int(slot)].record)
                slot = slots[Int(slot)].next
            }
        }
        return result
    }

    /// The records of one set (no ANY), in the order they arrived.
    package func records(for key: RecordKey) -> [CachedRecord] {
        var result: [CachedRecord] = []
        forEachRecord(named: key.name) { _, cached in
            if cached.pointee.record.type == key.type && cached.pointee.record.recordClass == key.recordClass {
                result.append(cached.pointee)
            }
        }
        return result
    }

    /// The records answering a question (ANY type or class matches every set of the name).
    package func answers(to question: RecordKey) -> [CachedRecord] {
        var result: [CachedRecord] = []
        forEachAnswer(to: question) { _, cached in result.append(cached.pointee) }
        return result
    }

    /// Calls `body` with every record answering a question. The record is lent in place (not copied: a copy costs
    /// reference counting of its names and data); the pointer is valid during the call only.
    func forEachAnswer(to question: RecordKey, _ body: (Handle, UnsafePointer<CachedRecord>) -> Void) {
        forEachRecord(named: question.name) { handle, cached in
            if (question.type == .any || question.type == cached.pointee.record.type)
                && (question.recordClass == .any || question.recordClass == cached.pointee.record.recordClass)
            {
                body(handle, cached)
            }
        }
    }

    /// When a peer's NSEC record says `question.name` has no record of `question.type` (RFC 6762 §6.1), the instant
    /// that statement ends; nil when no live one says so, or when one says the type exists. An NSEC claiming more
    /// than the longest query interval (an hour) is not taken at its word: a peer's mistake must not silence a
    /// question for years.
    func negativeAnswerEnd(for question: RecordKey, at now: Instant) -> Instant? {
        guard question.type != .any, question.type != .nsec else { return nil }
        var end: Instant?
        var listed = false
        forEachRecord(named: question.name) { _, cached in
            guard !cached.pointee.isLocal, cached.pointee.expiresAt > now,
                Int(cached.pointee.record.ttl) * 1000 <= MDNSConstants.queryIntervalMax,
                question.recordClass == .any || cached.pointee.record.recordClass == question.recordClass,
                case .nsec(_, let types) = cached.pointee.record.data
            else { return }
            if types.contains(question.type) {
                listed = true
            } else {
                end = max(end ?? cached.pointee.expiresAt, cached.pointee.expiresAt)
            }
        }
        return listed ? nil : end
    }

    /// ``negativeAnswerEnd(for:at:)`` while no record answering the question is cached: when the question stands
    /// answered by "no such record" (the querier holds it back, queries reporting negative answers say so).
    func standingNegativeAnswerEnd(for question: RecordKey, at now: Instant) -> Instant? {
        hasAnswer(to: question) ? nil : negativeAnswerEnd(for: question, at: now)
    }

    /// True when some record answers the question.
    func hasAnswer(to question: RecordKey) -> Bool {
        var found = false
        forEachAnswer(to: question) { _, _ in found = true }
        return found
    }

    /// Calls `body` with every record of a name, in the order they arrived, lent in place as in
    /// ``forEachAnswer(to:_:)``.
    func forEachRecord(named name: DNSName, _ body: (Handle, UnsafePointer<CachedRecord>) -> Void) {
        guard let chain = chainPosition(of: name, hash: CacheHash.of(name)) else { return }
        let first = chains[chain].slot
        slots.withUnsafeBufferPointer { slots in
            var slot = first
            while slot >= 0 {
                let pointer = slots.baseAddress! + Int(slot)
                let record = (UnsafeRawPointer(pointer) + MemoryLayout<Slot>.offset(of: \Slot.record)!)
                    .assumingMemoryBound(to: CachedRecord.self)
                body(Handle(slot: slot, generation: pointer.pointee.generation), record)
                slot = pointer.pointee.next
            }
        }
    }

    /// The handle of the cached record that is `record` (same name, type, class and data), if any.
    func handle(of record: ResourceRecord) -> Handle? {
        let slot = find(record)
        return slot < 0 ? nil : Handle(slot: slot, generation: slots[Int(slot)].generation)
    }

    /// True when the record a handle names is cached and came from a peer (not this host's own).
    func isFromPeer(_ handle: Handle) -> Bool {
        isCached(handle) && !slots[Int(handle.slot)].record.isLocal
    }

    /// When the cached record a handle names is next due for a refresh query (nil for this host's own).
    func nextRefresh(of handle: Handle) -> Instant? {
        isCached(handle) ? slots[Int(handle.slot)].record.nextRefresh : nil
    }

    /// A peer sent a shared record this host publishes too: its copy is kept aside, and a goodbye drops it, so that
    /// when this host withdraws its own the peer's takes its place as it stands (see `removeLocal`). Returns false,
    /// doing nothing, when this host's copy is not cached here (not announced on this link yet, or published on
    /// another link only): the peer's record is then cached like any other.
    mutating func notePeerCopy(
        _ incoming: ResourceRecord, at now: Instant,
        refreshJitter: Int
    ) -> Bool {
        let slot = find(incoming)
        guard slot >= 0, slots[Int(slot)].record.isLocal else { return false }
        if incoming.ttl == 0 {
            peerCopies[slot] = nil
        } else {
            peerCopies[slot] = CachedRecord(
                record: stored(incoming), dataHash: slots[Int(slot)].record.dataHash, receivedAt: now,
                expiresAt: now + Int(incoming.ttl) * 1000, isLocal: false,
                refreshJitter: UInt8(clamping: refreshJitter))
        }
        return true
    }

    /// True when the record a handle names is cached and may be listed as a known answer.
    func isWorthListing(_ handle: Handle, at now: Instant) -> Bool {
        isCached(handle) && slots[Int(handle.slot)].record.isWorthListing(at: now)
    }

    /// The earliest instant at which something may expire (possibly earlier: a refreshed record's old deadline).
    package var nextExpiry: Instant? { deadlines.min?.at }

    // MARK: - Changing

    /// Adds or refreshes a record received at `now` (RFC 6762 §10.1–10.2): TTL 0 schedules removal one
    /// second later; the cache-flush bit ends, one second later, every other record of the set that
    /// arrived more than a second ago. Reports an added record in `changes`; returns the record's handle and next
    /// refresh when it is cached.
    /// `refreshJitter` (0–200, in hundredths of a percent) spreads this record's refresh queries. `isWanted` says
    /// whether some operation is asking for the incoming record's set (records someone asks for are the last to go
    /// when the cache is full; the answer is kept with the record, ``CachedRecord/isWanted``).
    /// `isNewcomerWanted`, when given, is that answer (the caller knew already).
    @discardableResult
    mutating func insert(
        _ incoming: ResourceRecord, at now: Instant,
        isLocal: Bool = false, refreshJitter: Int = 0, isWanted: (RecordKey) -> Bool = { _ in false },
        isNewcomerWanted: Bool? = nil, changes: inout [CacheChange]
    ) -> (handle: Handle, nextRefresh: Instant?)? {
        let hash = CachedRecord.dataHash(incoming.data)
        let nameHash = CacheHash.of(incoming.name)
        let graceEnd = now + MDNSConstants.cacheFlushGrace
        if incoming.cacheFlush && incoming.ttl > 0, let chain = chainPosition(of: incoming.name, hash: nameHash) {
            // Our own announcements flush stale remote members too; but this host's own records are withdrawn by
            // their owner, never flushed.
            var slot = chains[chain].slot
            while slot >= 0 {
                let index = Int(slot)
                let cached = slots[index].record
                if cached.record.type == incoming.type && cached.record.recordClass == incoming.recordClass
                    && !cached.isLocal && !(cached.dataHash == hash && cached.record.data == incoming.data)
                    && now - cached.receivedAt > MDNSConstants.cacheFlushGrace && cached.expiresAt > graceEnd
                {
                    slots[index].record.expiresAt = graceEnd
                    schedule(slot)
                }
                slot = slots[index].next
            }
        }
        var wantedMemo: Bool?
        func wanted() -> Bool {
            if let wantedMemo { return wantedMemo }
            let answer = isNewcomerWanted ?? isWanted(RecordKey(incoming))
            wantedMemo = answer
            return answer
        }
        let identity = CacheHash.of(incoming, nameHash: nameHash)
        let found = find(incoming, identity: identity)
        if found >= 0 {
            refresh(found, with: incoming, at: now, isLocal: isLocal, refreshJitter: refreshJitter)
            if !slots[Int(found)].record.isLocal { setWanted(found, wanted()) }
            return (Handle(slot: found, generation: slots[Int(found)].generation), slots[Int(found)].record.nextRefresh)
        }
        guard incoming.ttl > 0 else { return nil }
        let expiresAt = isLocal ? Instant.distantFuture : now + Int(incoming.ttl) * 1000
        if count >= limit {
            // Full: make room, or drop the newcomer when it is itself the junk to go, or when records nobody asks for
            // have taken the places of others as often as the budget allows this second.
            let keepNewcomer = isLocal || wanted()
            guard keepNewcomer || unwantedEvictions.allows(at: now) else {
                droppedWhenFull += 1
                return nil
            }
            let evicted = evictOne(except: RecordKey(incoming), newcomerExpiry: expiresAt, keepNewcomer: keepNewcomer)
            if evicted && !keepNewcomer { unwantedEvictions.spend() }
            if evicted || !isLocal { droppedWhenFull += 1 }
            guard evicted || isLocal else { return nil }
        }
        var record = CachedRecord(
            record: stored(incoming, nameHash: nameHash), dataHash: hash, receivedAt: now, expiresAt: expiresAt,
            isLocal: isLocal, refreshJitter: UInt8(clamping: refreshJitter))
        record.isWanted = !isLocal && wanted()
        let slot = append(record, nameHash: nameHash, identity: identity)
        noteUnwanted(slot)
        changes.append(.added(record.record))
        return (Handle(slot: slot, generation: slots[Int(slot)].generation), slots[Int(slot)].record.nextRefresh)
    }

    /// Adds or refreshes a record, returning the changes (for callers that do not collect them).
    package mutating func insert(
        _ incoming: ResourceRecord, at now: Instant,
        isLocal: Bool = false, refreshJitter: Int = 0,
        isWanted: (RecordKey) -> Bool = { _ in false }
    ) -> [CacheChange] {
        var changes: [CacheChange] = []
        insert(
            incoming, at: now, isLocal: isLocal, refreshJitter: refreshJitter, isWanted: isWanted,
            changes: &changes)
        return changes
    }

    /// Removes this host's own record (a withdrawn registration), reporting it; when a peer publishes it too, the
    /// peer's copy stays, with the peer's TTL, and nothing is reported.
    package mutating func removeLocal(_ record: ResourceRecord, at now: Instant) -> [CacheChange] {
        let slot = find(record)
        guard slot >= 0, slots[Int(slot)].record.isLocal else { return [] }
        let cached = slots[Int(slot)].record
        if let peerCopy = peerCopies.removeValue(forKey: slot), peerCopy.expiresAt > now {
            slots[Int(slot)].record = peerCopy
            schedule(slot)
            noteUnwanted(slot)
            return []
        }
        remove(slot)
        return [.removed(cached.record)]
    }

    /// Ends the life of a remote record now (a peer no longer answers for it, RFC 6762 §10.5).
    mutating func flush(_ handle: Handle) -> [CacheChange] {
        guard isCached(handle), !slots[Int(handle.slot)].record.isLocal else { return [] }
        let removed = slots[Int(handle.slot)].record.record
        remove(handle.slot)
        return [.removed(removed)]
    }

    /// Removes every record whose time is up at `now`.
    package mutating func expire(at now: Instant) -> [CacheChange] {
        var changes: [CacheChange] = []
        while let first = deadlines.min, first.at <= now {
            _ = deadlines.removeMin()
            guard isLive(first) else { continue }
            let index = Int(first.slot)
            slots[index].scheduledExpiry = .distantFuture
            if slots[index].record.expiresAt <= now {
                changes.append(.removed(slots[index].record.record))
                remove(first.slot)
            } else {
                schedule(first.slot)  // refreshed since this entry was made
            }
        }
        return changes
    }

    /// Removes everything (the link went away), reporting each record.
    package mutating func removeAll() -> [CacheChange] {
        let changes = allRecords.map { CacheChange.removed($0.record) }
        slots = []
        firstFree = -1
        chains.removeAll()
        index.removeAll()
        peerCopies = [:]
        deadlines = Heap()
        unwantedDeadlines = Heap()
        keepsUnwantedDeadlines = false
        count = 0
        return changes
    }

    /// Updates a cached record's querier bookkeeping.
    mutating func update(_ handle: Handle, _ body: (inout CachedRecord) -> Void) {
        guard isCached(handle) else { return }
        body(&slots[Int(handle.slot)].record)
    }

    // MARK: - Slots and chains

    /// The slot holding the record with `record`'s name, type, class and data, or -1. `identity`, when given, is
    /// the record's `CacheHash`.
    func find(_ record: ResourceRecord, identity: UInt32? = nil) -> Int32 {
        let hash = identity ?? CacheHash.of(record, nameHash: CacheHash.of(record.name))
        let position = slots.withUnsafeBufferPointer { slots in
            index.position(of: hash) { slot in
                let cached = slots[Int(slot)].record.record
                return cached.type == record.type && cached.recordClass == record.recordClass
                    && cached.name == record.name && cached.data == record.data
            }
        }
        return position.map { index[$0].slot } ?? -1
    }

    /// The position in `chains` of the chain of `name`, whose hash is `hash`.
    func chainPosition(of name: DNSName, hash: UInt32) -> Int? {
        slots.withUnsafeBufferPointer { slots in
            chains.position(of: hash) { slots[Int($0)].record.record.name == name }
        }
    }

    func isCached(_ handle: Handle) -> Bool {
        handle.slot >= 0 && Int(handle.slot) < slots.count && !slots[Int(handle.slot)].isFree
            && slots[Int(handle.slot)].generation == handle.generation
    }

    /// True when a heap entry is the live one of a cached record.
    func isLive(_ deadline: Deadline) -> Bool {
        let index = Int(deadline.slot)
        return index < slots.count && !slots[index].isFree && slots[index].generation == deadline.generation
            && slots[index].scheduledExpiry == deadline.at
    }

    /// A record's new TTL and arrival. A goodbye shortens its life to one second (RFC 6762 §10.1). This
    /// host's own records change only through their owner.
    private mutating func refresh(
        _ slot: Int32, with incoming: ResourceRecord, at now: Instant,
        isLocal: Bool, refreshJitter: Int
    ) {
        let index = Int(slot)
        guard !slots[index].record.isLocal || isLocal else { return }
        // Only a shared record is another host's as much as ours; a unique one (cache-flush bit) heard back from
        // elsewhere is an echo of ours (a reflector, a sleep proxy), not kept.
        if isLocal && !slots[index].record.isLocal && !slots[index].record.record.cacheFlush
            && slots[index].record.expiresAt > now
        {
            peerCopies[slot] = slots[index].record
        }
        if incoming.ttl == 0 {
            slots[index].record.expiresAt = min(slots[index].record.expiresAt, now + MDNSConstants.goodbyeGrace)
        } else {
            if slots[index].record.record.hasSameCase(as: incoming) {
                slots[index].record.record.ttl = incoming.ttl
                slots[index].record.record.cacheFlush = incoming.cacheFlush
            } else {
                slots[index].record.record = stored(incoming)  // the same record with other letter case
            }
            slots[index].record.receivedAt = now
            slots[index].record.expiresAt = isLocal ? .distantFuture : now + Int(incoming.ttl) * 1000
            // A record heard from a peer that this host now publishes too (a shared PTR such as a service type's
            // enumeration record) becomes this host's own: it lives until its owner withdraws it.
            if isLocal { slots[index].record.isLocal = true }
            slots[index].record.refreshesSent = 0
            slots[index].record.refreshJitter = UInt8(clamping: refreshJitter)
        }
        schedule(slot)
    }

    /// The record as it is kept: its names in blocks of their own (a cached record must not keep the whole packet it
    /// came in alive), shared with the chain of a cached name written the same way or with a name stored just before
    /// (an SRV record's name is the PTR target before it; an address record's name is the SRV target).
    private mutating func stored(_ record: ResourceRecord, nameHash: UInt32? = nil) -> ResourceRecord {
        var copy = record
        copy.name = storedName(record.name, hash: nameHash)
        switch record.data {
        case .ptr(let target): copy.data = .ptr(storedName(target))
        case .cname(let target): copy.data = .cname(storedName(target))
        case .srv(var srv):
            srv.target = storedName(srv.target)
            copy.data = .srv(srv)
        case .nsec(let next, let types): copy.data = .nsec(next: storedName(next), types: types)
        default: break
        }
        return copy
    }

    private mutating func storedName(_ name: DNSName, hash: UInt32? = nil) -> DNSName {
        if let recent = recentNames.first(where: { $0.isIdentical(to: name) }) { return recent }
        if let chain = chainPosition(of: name, hash: hash ?? CacheHash.of(name)) {
            let chainName = slots[Int(chains[chain].slot)].record.record.name
            if chainName.isIdentical(to: name) { return chainName }
        }
        let compacted = name.compacted()
        recentNames[nextRecentName] = compacted
        nextRecentName = (nextRecentName + 1) % recentNames.count
        return compacted
    }

    /// Puts a record at the end of its name's chain, in a free slot if there is one.
    private mutating func append(_ record: CachedRecord, nameHash: UInt32, identity: UInt32) -> Int32 {
        let slot: Int32
        if firstFree >= 0 {
            slot = firstFree
            firstFree = slots[Int(slot)].next
            slots[Int(slot)].record = record
            slots[Int(slot)].isFree = false
            slots[Int(slot)].next = -1
        } else {
            if slots.isEmpty {
                // Room for the whole cache at once, touched only as it fills: growing by doubling would leave each
                // outgrown array behind as free memory the process still holds.
                slots.reserveCapacity(min(limit, Self.slotsReservedAtMost))
                deadlines.reserveCapacity(min(limit, Self.slotsReservedAtMost))
            }
            slot = Int32(slots.count)
            slots.append(Slot(record: record))
        }
        slots[Int(slot)].identity = identity
        if let chain = chainPosition(of: record.record.name, hash: nameHash) {
            let last = chains[chain].extra
            slots[Int(slot)].previous = last
            slots[Int(last)].next = slot
            chains[chain].extra = slot
        } else {
            slots[Int(slot)].previous = -1
            chains.insert(hash: nameHash, slot: slot, extra: slot)
        }
        index.insert(hash: identity, slot: slot, extra: ())
        count += 1
        schedule(slot)
        return slot
    }

    /// Takes a record out of its chain and frees its slot (its heap entry, if any, goes stale).
    mutating func remove(_ slot: Int32) {
        let index = Int(slot)
        if let position = self.index.position(of: slots[index].identity, where: { $0 == slot }) {
            self.index.remove(at: position)
        }
        let previous = slots[index].previous
        let next = slots[index].next
        if previous < 0 || next < 0,
            let chain = chainPosition(
                of: slots[index].record.record.name, hash: CacheHash.of(slots[index].record.record.name))
        {
            if previous < 0 && next < 0 {
                chains.remove(at: chain)
            } else if previous < 0 {
                chains[chain].slot = next
            } else {
                chains[chain].extra = previous
            }
        }
        if previous >= 0 { slots[Int(previous)].next = next }
        if next >= 0 { slots[Int(next)].previous = previous }
        slots[index].record = Self.vacant
        if !peerCopies.isEmpty { peerCopies[slot] = nil }
        slots[index].isFree = true
        slots[index].generation &+= 1
        slots[index].scheduledExpiry = .distantFuture
        slots[index].next = firstFree
        firstFree = slot
        count -= 1
        if keepsUnwantedDeadlines && count < limit / 2 {
            unwantedDeadlines = Heap()
            keepsUnwantedDeadlines = false
        }
    }

    /// The most slots reserved ahead (a larger cache grows beyond them as it fills).
    private static let slotsReservedAtMost = 1 << 16

    /// What a free slot holds: nothing that keeps memory alive.
    private static let vacant = CachedRecord(
        record: ResourceRecord(name: .root, ttl: 0, data: .a(IPv4Address(0))), dataHash: 0, receivedAt: .zero,
        expiresAt: .distantFuture, isLocal: false, refreshJitter: 0)

    /// Gives a record a heap entry when it expires before the one it has (later expiries are found when the earlier
    /// entry comes up). Rebuilds the heap when stale entries outnumber live ones, so it stays bounded.
    mutating func schedule(_ slot: Int32) {
        let index = Int(slot)
        let expiresAt = slots[index].record.expiresAt
        guard expiresAt < .distantFuture, expiresAt < slots[index].scheduledExpiry else { return }
        slots[index].scheduledExpiry = expiresAt
        deadlines.insert(Deadline(at: expiresAt, slot: slot, generation: slots[index].generation))
        if deadlines.count > 2 * count + 1024 { rebuildDeadlines() }
    }

    private mutating func rebuildDeadlines() {
        var live: [Deadline] = []
        live.reserveCapacity(count)
        for (index, slot) in slots.enumerated() where !slot.isFree && slot.scheduledExpiry < .distantFuture {
            live.append(Deadline(at: slot.scheduledExpiry, slot: Int32(index), generation: slot.generation))
        }
        deadlines = Heap(live)
    }
}

extension Instant {
    /// Later than any instant the engine will reach.
    package static let distantFuture = Instant(milliseconds: Int64.max / 4)
}
