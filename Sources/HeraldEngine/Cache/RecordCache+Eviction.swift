import HeapModule
import HeraldWire

/// What goes when the cache is full (RFC 6762 §10 leaves the policy to us; a hostile or busy LAN must not exhaust
/// memory).
extension RecordCache {
    /// Makes room for a newcomer. The victim is the remote record closest to its expiry in a set nobody is asking
    /// for, never this host's own and never from the set `protected` being added to. A newcomer nobody asks for
    /// that would expire no later than that victim is the junk itself: nothing is evicted. Sets someone asks for go
    /// only to make room for this host's own records or for other wanted ones. Only the
    /// `MDNSConstants.evictionCandidates` entries closest to expiry are looked at; when they are all wanted, a wanted
    /// newcomer takes the place of an unwanted record found further on (``unwantedSlot(except:isWanted:)``), and of
    /// the wanted record closest to expiry only if there is none. Returns true when a record was evicted.
    mutating func evictOne(
        except protected: RecordKey, newcomerExpiry: Instant, keepNewcomer: Bool,
        isWanted: (RecordKey) -> Bool
    ) -> Bool {
        var setAside: [Deadline] = []
        var fallback: Deadline?
        // Whatever was looked at and kept goes back into the heap (a record without its entry would never expire).
        defer { for deadline in setAside { deadlines.insert(deadline) } }
        while setAside.count < MDNSConstants.evictionCandidates, let top = deadlines.min {
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
            let key = RecordKey(slots[index].record.record)
            if slots[index].record.isLocal || key == protected || isWanted(key) {
                if !slots[index].record.isLocal && key != protected && fallback == nil { fallback = top }
                setAside.append(deadlines.removeMin())
                continue
            }
            if !keepNewcomer && top.at >= newcomerExpiry { return false }
            _ = deadlines.removeMin()
            remove(top.slot)
            return true
        }
        guard keepNewcomer else { return false }
        if setAside.count >= MDNSConstants.evictionCandidates,
            let victim = unwantedSlot(except: protected, isWanted: isWanted)
        {
            remove(victim)
            return true
        }
        if let fallback {
            setAside.removeAll { $0 == fallback }
            remove(fallback.slot)
            return true
        }
        return false
    }

    /// Among the next `MDNSConstants.evictionCandidates` slots from where the last search stopped (a bounded,
    /// rotating look at records beyond those nearest expiry), the remote record nobody asks for that expires first.
    mutating func unwantedSlot(except protected: RecordKey, isWanted: (RecordKey) -> Bool) -> Int32? {
        guard !slots.isEmpty else { return nil }
        var best: Int32?
        for _ in 0..<min(MDNSConstants.evictionCandidates, slots.count) {
            let index = evictionCursor % slots.count
            evictionCursor = index + 1
            let slot = slots[index]
            guard !slot.isFree, !slot.record.isLocal else { continue }
            let key = RecordKey(slot.record.record)
            guard key != protected, !isWanted(key) else { continue }
            if best.map({ slot.record.expiresAt < slots[Int($0)].record.expiresAt }) ?? true { best = Int32(index) }
        }
        return best
    }
}
