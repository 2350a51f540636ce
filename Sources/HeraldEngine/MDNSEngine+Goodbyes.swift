import HeraldWire

/// Withdrawing records: goodbyes (RFC 6762 §10.1) when a registration is cancelled, a link goes away or the
/// engine shuts down, except for shared records another registration still publishes.
extension MDNSEngine {
    /// Withdraws a publication: goodbyes on every link where it was announced (RFC 6762 §10.1), except for shared
    /// records another registration still publishes.
    mutating func withdraw(_ id: OperationID, sendGoodbyes goodbyes: Bool = true) {
        guard let publication = publications[id] else { return }
        for link in publication.phases.keys.sorted() {
            if goodbyes { sendGoodbyes(for: [id], on: link, keepingShared: true) }
            dropLocalRecords(of: id, on: link)
            authority.remove(owner: id, on: link)
            let stillPublished = (publication.records[link] ?? []).filter {
                authority.isPublished($0.record, on: link, byOtherThan: id)
            }
            scheduler.withdraw(
                (publication.records[link] ?? []).map(\.record).filter { record in
                    !stillPublished.contains { $0.record == record }
                }, on: link)
        }
        publications[id] = nil
    }

    /// Removes a publication's records from the link's cache (so local browsers see them go), except those
    /// another publication still has.
    mutating func dropLocalRecords(of id: OperationID, on link: LinkID) {
        guard let records = publications[id]?.records[link] else { return }
        var changes: [CacheChange] = []
        for record in records where !authority.isPublished(record.record, on: link, byOtherThan: id) {
            changes += removeLocalRecord(record.record, on: link)
        }
        dispatch(changes, on: link)
    }

    /// Removes this host's own copy of a record from the link's cache. Where a peer publishes the record too, the
    /// peer's copy stays, and is refreshed like any peer's record (RFC 6762 §5.2).
    mutating func removeLocalRecord(_ record: ResourceRecord, on link: LinkID) -> [CacheChange] {
        let changes = caches[link]?.removeLocal(record, at: now) ?? []
        if changes.isEmpty, let handle = caches[link]?.handle(of: record), caches[link]?.isFromPeer(handle) == true {
            querier.noteRefresh(at: caches[link]?.nextRefresh(of: handle), of: record, on: link)
        }
        return changes
    }

    /// Sends TTL-0 copies of the records the publications `ids` announced on a link, in as few packets as they
    /// fit. With `keepingShared` (one publication withdrawing), records another publication still has are left out;
    /// without (the link or the engine going away), everything goes.
    mutating func sendGoodbyes(for ids: [OperationID], on link: LinkID, keepingShared: Bool) {
        var records: [ResourceRecord] = []
        let builder = AnswerBuilder(authority: authority, link: link)
        for id in ids {
            guard let publication = publications[id], publication.phases[link]?.isAnnounced ?? false else { continue }
            var names: [DNSName] = []
            for record in publication.records[link] ?? [] {
                if keepingShared && authority.isPublished(record.record, on: link, byOtherThan: id) { continue }
                if !records.contains(record.record) { records.append(record.record) }
                if record.isUnique, !names.contains(record.record.name) { names.append(record.record.name) }
            }
            // Peers cached the NSEC that came with our answers for names we are giving up entirely (RFC 6762
            // §6.1): a goodbye for it too, or it would outlive the records it describes by its whole TTL.
            for name in names where !authority.isOwned(name, on: link, byOtherThan: id) {
                if let nsec = builder.nsec(for: name), !records.contains(nsec) { records.append(nsec) }
            }
        }
        sendGoodbyes(records, on: link)
    }

    /// Sends goodbyes for some of a publication's records (an update replaced or dropped them).
    mutating func sendGoodbyes(_ records: [ResourceRecord], for id: OperationID, on link: LinkID, keepingShared: Bool) {
        sendGoodbyes(
            records.filter { !keepingShared || !authority.isPublished($0, on: link, byOtherThan: id) }, on: link)
    }

    private mutating func sendGoodbyes(_ records: [ResourceRecord], on link: LinkID) {
        guard !records.isEmpty else { return }
        let goodbyes = records.map { record -> ResourceRecord in
            var copy = record
            copy.ttl = 0
            return copy
        }
        queueGoodbyes(goodbyes, on: link)
        // Noted with their TTL of 0, the records' notes are soon forgotten (see ResponseScheduler.MulticastNote).
        scheduler.noteMulticast(goodbyes, on: link, at: now)
    }
}
