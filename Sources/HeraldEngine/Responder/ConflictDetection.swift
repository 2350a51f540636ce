import HeraldWire

/// When a peer's record conflicts with a publication (RFC 6762 §8.1, §9). The caller has already set aside
/// records that are this host's own data, wherever they come from (another interface on the link, a reflector).
extension Publication {
    /// True when `record`, seen in a peer's response on `link`, conflicts with what this publication claims there.
    ///
    /// - While probing, any record with a probed name, of any type, is a conflict (§8.1: the probes ask for ANY) —
    ///   but only once a probe has gone out: earlier responses may be stale and are ignored (§8.1, §8.2).
    /// - Once announced, a record with the name, type and class of one of its unique records but other data is
    ///   a conflict (§9). Shared records never conflict (§6.6), nor do known-unique ones (a reverse-mapping PTR:
    ///   no rename could end such a conflict).
    /// - A goodbye (TTL 0) claims nothing.
    func isConflicted(by record: ResourceRecord, on link: LinkID) -> Bool {
        guard record.ttl > 0, let phase = phases[link], let published = records[link] else { return false }
        // The probed records (``probedRecords(on:)``), looked at in place.
        let probed = published.lazy.filter { $0.isUnique && !$0.isKnownUnique }
        if phase.isProbing {
            guard probeSent.contains(link) else { return false }
            return probed.contains { $0.record.name == record.name }
        }
        let key = RecordKey(record)
        return probed.contains { $0.record.key == key && !$0.record.hasSameData(as: record) }
    }
}
