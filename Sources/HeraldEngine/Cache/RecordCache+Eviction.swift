import HeapModule
import HeraldWire

/// What goes when the cache is full (RFC 6762 §10 leaves the policy to us; a hostile or busy LAN must not exhaust
/// memory).
extension RecordCache {
    /// Makes room for a newcomer. The victim is the remote record nobody asks for that is closest to its expiry
    /// (`unwantedDeadlines`), never this host's own and never one of the set `protected` being added to. A newcomer
    /// nobody asks for that would expire no later than that victim is the junk itself: nothing is evicted. A wanted
    /// newcomer takes the place of the wanted record closest to expiry only when no record nobody asks for is left.
    /// Either way the victim comes off the top of a heap: the work per eviction does not grow with what is cached
    /// (``evictionProbes`` counts it). An evicted record is not reported removed: the operations it answered keep
    /// what they were told (a full cache is no news about the network). Returns true when a record was evicted.
    mutating func evictOne(except protected: RecordKey, newcomerExpiry: Instant, keepNewcomer: Bool) -> Bool {
        if !keepsUnwantedDeadlines {
            rebuildUnwantedDeadlines()
            keepsUnwantedDeadlines = true
        }
        if let victim = unwantedVictim(except: protected) {
            if !keepNewcomer && slots[Int(victim)].record.expiresAt >= newcomerExpiry { return false }
            remove(victim)
            return true
        }
        guard keepNewcomer, let victim = wantedVictim(except: protected) else { return false }
        remove(victim)
        return true
    }

    /// The remote record nobody asks for that expires first, outside `protected`. Entries that went stale (the
    /// record gone, asked for since, or refreshed to a later end) are dropped or put back at the record's real end on
    /// the way.
    private mutating func unwantedVictim(except protected: RecordKey) -> Int32? {
        var setAside: [Deadline] = []
        defer { for deadline in setAside { unwantedDeadlines.insert(deadline) } }
        while setAside.count < MDNSConstants.evictionCandidates, let top = unwantedDeadlines.min {
            evictionProbes += 1
            let index = Int(top.slot)
            guard index < slots.count, !slots[index].isFree, slots[index].generation == top.generation,
                !slots[index].record.isLocal, !slots[index].record.isWanted
            else {
                _ = unwantedDeadlines.removeMin()  // stale
                continue
            }
            if slots[index].record.expiresAt > top.at {
                // Refreshed since the entry was made: it goes back in at its real end.
                _ = unwantedDeadlines.removeMin()
                unwantedDeadlines.insert(
                    Deadline(at: slots[index].record.expiresAt, slot: top.slot, generation: top.generation))
                continue
            }
            if Self.belongs(slots[index].record.record, to: protected) {
                setAside.append(unwantedDeadlines.removeMin())
                continue
            }
            return top.slot  // its entry stays: it goes stale if the record is evicted, and stands if it is not
        }
        return nil
    }

    /// The remote record closest to expiry, all of them being asked for, outside `protected`: the expiry heap's top.
    private mutating func wantedVictim(except protected: RecordKey) -> Int32? {
        var setAside: [Deadline] = []
        // Whatever was looked at and kept goes back into the heap (a record without its entry would never expire).
        defer { for deadline in setAside { deadlines.insert(deadline) } }
        while setAside.count < MDNSConstants.evictionCandidates, let top = deadlines.min {
            evictionProbes += 1
            guard isLive(top) else {
                _ = deadlines.removeMin()  // stale
                continue
            }
            let index = Int(top.slot)
            if slots[index].record.expiresAt > top.at {
                // Refreshed since the entry was made: it goes back in at its real expiry.
                _ = deadlines.removeMin()
                slots[index].scheduledExpiry = .distantFuture
                schedule(top.slot)
                continue
            }
            if slots[index].record.isLocal || Self.belongs(slots[index].record.record, to: protected) {
                setAside.append(deadlines.removeMin())
                continue
            }
            return top.slot  // its heap entry goes stale with it
        }
        return nil
    }

    /// True when `record` is one of the set `key` names.
    private static func belongs(_ record: ResourceRecord, to key: RecordKey) -> Bool {
        record.type == key.type && record.recordClass == key.recordClass && record.name == key.name
    }

    /// Says again, for every record answering `question` (ANY matches every set of its name), whether an operation
    /// asks for it: after a question was added or removed, or an NSEC watcher came or went. A record nobody asks for
    /// any more becomes the first to go when the cache is full.
    package mutating func updateWanted(answering question: RecordKey, isWanted: (RecordKey) -> Bool) {
        guard let chain = chainPosition(of: question.name, hash: CacheHash.of(question.name)) else { return }
        var slot = chains[chain].slot
        while slot >= 0 {
            let index = Int(slot)
            let record = slots[index].record.record
            if (question.type == .any || question.type == record.type)
                && (question.recordClass == .any || question.recordClass == record.recordClass)
            {
                setWanted(slot, isWanted(RecordKey(record)))
            }
            slot = slots[index].next
        }
    }

    /// Marks a cached record asked for or not; one that stops being asked for joins the records evicted first.
    mutating func setWanted(_ slot: Int32, _ wanted: Bool) {
        let index = Int(slot)
        guard slots[index].record.isWanted != wanted else { return }
        slots[index].record.isWanted = wanted
        if !wanted { noteUnwanted(slot) }
    }

    /// Puts a remote record nobody asks for among the candidates for eviction, while the cache keeps them (see
    /// `unwantedDeadlines`). Rebuilds that heap when stale entries outnumber the records, so it stays bounded.
    mutating func noteUnwanted(_ slot: Int32) {
        let index = Int(slot)
        guard keepsUnwantedDeadlines, !slots[index].record.isLocal, !slots[index].record.isWanted,
            slots[index].record.expiresAt < .distantFuture
        else { return }
        unwantedDeadlines.insert(
            Deadline(at: slots[index].record.expiresAt, slot: slot, generation: slots[index].generation))
        if unwantedDeadlines.count > 2 * count + 1024 { rebuildUnwantedDeadlines() }
    }

    private mutating func rebuildUnwantedDeadlines() {
        var live: [Deadline] = []
        for (index, slot) in slots.enumerated()
        where !slot.isFree && !slot.record.isLocal && !slot.record.isWanted && slot.record.expiresAt < .distantFuture {
            live.append(Deadline(at: slot.record.expiresAt, slot: Int32(index), generation: slot.generation))
        }
        unwantedDeadlines = Heap(live)
    }
}
