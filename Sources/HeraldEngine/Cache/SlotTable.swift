import HeraldWire

/// The cache's hash tables from a name, or a whole record, to the slots holding it: finding a record, or the chain of
/// a name's records, costs one hash and a probe or two, with no walk along a chain (a flood's few PTR names hold
/// hundreds of records each) and no copies of names kept as keys (a name is read from the slot it leads to).
///
/// Open addressing with linear probing: each bucket holds a hash, a slot and `Extra` (the last slot of a name's
/// chain), and removal shifts later entries back, so no bucket is ever a tombstone. Hashes are the standard library's
/// seeded ones, so nobody can choose records that pile up in one run of buckets. Positions are only ever probed, never
/// iterated in an order anyone sees, so where entries land changes nothing the engine does.
struct SlotTable<Extra: Sendable>: Sendable {
    struct Entry: Sendable {
        var hash: UInt32
        /// The slot, or -1 for an empty bucket.
        var slot: Int32
        var extra: Extra
    }

    private static var smallestCapacity: Int { 64 }

    private var buckets: [Entry] = []
    private let vacant: Extra
    private(set) var count = 0

    /// A table whose empty buckets hold `vacant` as their extra.
    init(vacant: Extra) {
        self.vacant = vacant
    }

    /// The position of the entry filed under `hash` for whose slot `matches` is true, or nil. Valid until the table
    /// next changes.
    func position(of hash: UInt32, where matches: (Int32) -> Bool) -> Int? {
        guard !buckets.isEmpty else { return nil }
        return buckets.withUnsafeBufferPointer { buckets in
            let mask = buckets.count - 1
            var position = Int(hash) & mask
            while buckets[position].slot >= 0 {
                if buckets[position].hash == hash && matches(buckets[position].slot) { return position }
                position = (position + 1) & mask
            }
            return nil
        }
    }

    subscript(position: Int) -> Entry {
        get { buckets[position] }
        set { buckets[position] = newValue }
    }

    /// Every entry, in no particular order.
    var entries: some Sequence<Entry> { buckets.lazy.filter { $0.slot >= 0 } }

    /// Files `slot` under `hash` (the caller knows no entry for the same key is filed).
    mutating func insert(hash: UInt32, slot: Int32, extra: Extra) {
        if (count + 1) * 4 > buckets.count * 3 { grow() }
        place(Entry(hash: hash, slot: slot, extra: extra))
        count += 1
    }

    /// Takes out the entry at `position`.
    mutating func remove(at position: Int) {
        let mask = buckets.count - 1
        var hole = position
        // Shift back every later entry of the run whose home is not after the hole.
        var next = (hole + 1) & mask
        while buckets[next].slot >= 0 {
            let home = Int(buckets[next].hash) & mask
            if (hole - home) & mask <= (next - home) & mask {
                buckets[hole] = buckets[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        buckets[hole] = Entry(hash: 0, slot: -1, extra: vacant)
        count -= 1
    }

    /// Forgets everything, giving back the table.
    mutating func removeAll() {
        buckets = []
        count = 0
    }

    private mutating func place(_ entry: Entry) {
        let mask = buckets.count - 1
        var position = Int(entry.hash) & mask
        while buckets[position].slot >= 0 { position = (position + 1) & mask }
        buckets[position] = entry
    }

    private mutating func grow() {
        let old = buckets
        buckets = Array(
            repeating: Entry(hash: 0, slot: -1, extra: vacant), count: max(Self.smallestCapacity, old.count * 2))
        for entry in old where entry.slot >= 0 { place(entry) }
    }
}

/// The hashes the cache files names and records under: equal for names and records it counts as the same (names
/// compare without regard to case, inside the data too).
enum CacheHash {
    static func of(_ name: DNSName) -> UInt32 {
        var hasher = Hasher()
        name.hash(into: &hasher)
        return UInt32(truncatingIfNeeded: hasher.finalize())
    }

    /// A record's, from its name's hash.
    static func of(_ record: ResourceRecord, nameHash: UInt32) -> UInt32 {
        var hasher = Hasher()
        hasher.combine(
            UInt64(nameHash) << 32 | UInt64(record.type.rawValue) << 16 | UInt64(record.recordClass.rawValue))
        record.data.hash(into: &hasher)
        return UInt32(truncatingIfNeeded: hasher.finalize())
    }
}
