/// What a query asking for negative answers (kDNSServiceFlagsReturnIntermediates) shows of them, per interface and
/// record type: NoSuchRecord is shown while some link of the interface reports a negative answer and no record of the
/// type is shown there. So a record arriving on one link of a dual-stack interface ends NoSuchRecord before the
/// record is reported, whatever the other link still holds.
struct NegativeAnswerPresence {
    struct Key: Hashable {
        var interface: Int
        var type: UInt16
    }

    /// A change in what the client sees.
    enum Change: Equatable {
        /// NoSuchRecord with the Add flag, and this TTL.
        case shown(ttl: UInt32)
        /// NoSuchRecord without the Add flag.
        case hidden
    }

    /// How many links report a negative answer, and its last TTL.
    private var negativeLinks: [Key: (count: Int, ttl: UInt32)] = [:]
    /// How many records of the type the client sees on the interface.
    private var records: [Key: Int] = [:]
    private var shown: Set<Key> = []

    /// A link's negative answer began (`added`, with its TTL) or ended.
    mutating func negative(_ key: Key, added: Bool, ttl: UInt32 = 0) -> Change? {
        var entry = negativeLinks[key] ?? (0, 0)
        entry.count = max(0, entry.count + (added ? 1 : -1))
        if added { entry.ttl = ttl }
        negativeLinks[key] = entry.count == 0 ? nil : entry
        return settle(key)
    }

    /// The client was shown a record of the type on the interface (`added`), or its removal.
    mutating func record(_ key: Key, added: Bool) -> Change? {
        let count = max(0, (records[key] ?? 0) + (added ? 1 : -1))
        records[key] = count == 0 ? nil : count
        return settle(key)
    }

    /// Forgets everything (the operation stopped: parked or refused).
    mutating func removeAll() {
        negativeLinks.removeAll()
        records.removeAll()
        shown.removeAll()
    }

    private mutating func settle(_ key: Key) -> Change? {
        let negative = negativeLinks[key]
        let visible = negative != nil && records[key] == nil
        if visible && shown.insert(key).inserted { return .shown(ttl: negative!.ttl) }
        if !visible && shown.remove(key) != nil { return .hidden }
        return nil
    }
}
