import HeraldWire

/// The records this host answers for on each link, indexed for answering questions (RFC 6762 §6) and
/// for recognising its own data in what peers send.
struct AuthorityTable: Sendable {
    struct Entry: Sendable {
        var record: AuthoritativeRecord
        var owner: OperationID
        /// False while the owner is still probing: such records are not yet answered for (RFC 6762 §8.1).
        var announced: Bool
    }

    private var byLink: [LinkID: [RecordKey: [Entry]]] = [:]
    private var namesByLink: [LinkID: [DNSName: Set<RecordKey>]] = [:]
    /// On how many links each name has entries: most records peers send are at names this host has nothing at, and
    /// one lookup here settles that for every link at once.
    private var linksByName: [DNSName: Int] = [:]

    /// Replaces every entry of `owner` on `link`.
    mutating func set(_ records: [AuthoritativeRecord], owner: OperationID, announced: Bool, on link: LinkID) {
        remove(owner: owner, on: link)
        for record in records {
            let key = RecordKey(record.record)
            byLink[link, default: [:]][key, default: []].append(
                Entry(record: record, owner: owner, announced: announced))
            if namesByLink[link]?[key.name] == nil { linksByName[key.name, default: 0] += 1 }
            namesByLink[link, default: [:]][key.name, default: []].insert(key)
        }
    }

    /// Removes every entry of `owner` on `link`.
    mutating func remove(owner: OperationID, on link: LinkID) {
        guard var table = byLink[link] else { return }
        for (key, entries) in table where entries.contains(where: { $0.owner == owner }) {
            let kept = entries.filter { $0.owner != owner }
            table[key] = kept.isEmpty ? nil : kept
            if kept.isEmpty {
                namesByLink[link]?[key.name]?.remove(key)
                if namesByLink[link]?[key.name]?.isEmpty ?? false {
                    namesByLink[link]?[key.name] = nil
                    forget(key.name)
                }
            }
        }
        byLink[link] = table.isEmpty ? nil : table
    }

    mutating func removeLink(_ link: LinkID) {
        byLink[link] = nil
        if let names = namesByLink[link]?.keys {
            for name in names { forget(name) }
        }
        namesByLink[link] = nil
    }

    /// A link has no more entries at `name`.
    private mutating func forget(_ name: DNSName) {
        guard let links = linksByName[name] else { return }
        linksByName[name] = links > 1 ? links - 1 : nil
    }

    /// Announced records answering a question on a link.
    func answers(to question: RecordKey, on link: LinkID) -> [Entry] {
        entries(matching: question, on: link).filter(\.announced)
    }

    /// The announced records answering a question, each once even when several owners publish it (two services of
    /// one type share the `_services._dns-sd._udp` PTR record).
    func records(answering question: RecordKey, on link: LinkID) -> [AuthoritativeRecord] {
        let entries = answers(to: question, on: link)
        if entries.count < 2 { return entries.map(\.record) }
        var seen = Set<RecordIdentity>()
        return entries.map(\.record).filter { seen.insert(RecordIdentity($0.record)).inserted }
    }

    /// True when an owner other than `owner` publishes the same record on the link: a shared record outlives
    /// one of its owners, and gets no goodbye until the last one withdraws it.
    func isPublished(_ record: ResourceRecord, on link: LinkID, byOtherThan owner: OperationID) -> Bool {
        byLink[link]?[RecordKey(record)]?.contains { $0.owner != owner && $0.record.record.hasSameData(as: record) }
            ?? false
    }

    /// True when an owner other than `owner` publishes any record at `name` on the link.
    func isOwned(_ name: DNSName, on link: LinkID, byOtherThan owner: OperationID) -> Bool {
        guard let keys = namesByLink[link]?[name], let table = byLink[link] else { return false }
        return keys.contains { table[$0]?.contains { $0.owner != owner } ?? false }
    }

    /// True when some owner publishes (or is probing) a record at `name` on the link.
    /// True when this host has records at `name` on some link (announced or not): a record of a name it does not
    /// have can neither be its own nor conflict with its own.
    func hasRecords(named name: DNSName) -> Bool {
        linksByName[name] != nil
    }

    func hasRecords(named name: DNSName, on link: LinkID) -> Bool {
        namesByLink[link]?[name] != nil
    }

    /// Every entry (announced or not) whose set a question covers.
    func entries(matching question: RecordKey, on link: LinkID) -> [Entry] {
        guard let table = byLink[link] else { return [] }
        if question.type != .any && question.recordClass != .any { return table[question] ?? [] }
        let keys = namesByLink[link]?[question.name] ?? []
        return keys.filter { $0.isAnswered(byQuestionFor: question) }.flatMap { table[$0] ?? [] }
    }

    /// The types this host has at `name` on a link, when it owns the name with a unique record (NSEC is
    /// only asserted for such names, RFC 6762 §6.1).
    func ownedTypes(at name: DNSName, on link: LinkID) -> [RecordType]? {
        guard let keys = namesByLink[link]?[name], let table = byLink[link] else { return nil }
        let entries = keys.flatMap { table[$0] ?? [] }.filter(\.announced)
        guard entries.contains(where: { $0.record.isUnique }) else { return nil }
        return Array(Set(entries.map { $0.record.record.type })).sorted()
    }

    /// True when this host publishes exactly this record (any owner, any link, announced or still probing), or,
    /// for an NSEC record, asserts exactly its types at its name: data seen from a peer that matches it is ours
    /// echoed back (a second interface on the same link, a reflector), never a conflict.
    func containsAnywhere(_ record: ResourceRecord) -> Bool {
        if case .nsec(_, let types) = record.data, record.type == .nsec {
            return byLink.keys.contains { ownedTypes(at: record.name, on: $0) == types.types }
        }
        guard linksByName[record.name] != nil else { return false }
        let key = RecordKey(record)
        for table in byLink.values
        where table[key]?.contains(where: { $0.record.record.hasSameData(as: record) }) ?? false {
            return true
        }
        return false
    }
}
