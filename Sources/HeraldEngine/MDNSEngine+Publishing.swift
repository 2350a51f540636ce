import HeraldWire

/// The responder's publications: registering, probing (RFC 6762 §8.1), announcing (§8.3), updating
/// (§8.4), renaming after conflicts (§9) and goodbyes (§10.1).
extension MDNSEngine {
    /// Registers a service; `.registered(name)` follows once its name is probed and announced.
    public mutating func register(_ id: OperationID, _ registration: ServiceRegistration, at time: Instant) {
        now = max(now, time)
        cancel(id, at: time)
        let label = registration.instance.isEmpty ? hostLabel : registration.instance
        publications[id] = Publication(id: id, kind: .service(registration), label: label)
        for link in links.keys.sorted() { startPublication(id, on: link) }
    }

    /// Replaces a registration's TXT record; the new data is announced again without probing (RFC 6762 §8.4).
    public mutating func updateTXT(_ id: OperationID, txt: TXTRecord, at time: Instant) {
        now = max(now, time)
        guard var publication = publications[id], case .service(var registration) = publication.kind else { return }
        registration.txt = txt
        publication.kind = .service(registration)
        publications[id] = publication
        for link in publication.phases.keys.sorted() { republish(id, on: link) }
    }

    /// The registration's current full instance name, once known.
    public func registeredName(of id: OperationID) -> DNSName? {
        guard let publication = publications[id], case .service(let registration) = publication.kind else { return nil }
        return try? registration.type.prepending(label: publication.label)
    }

    // MARK: - Records

    /// The records a publication puts on a link.
    func records(of publication: Publication, on link: LinkID) -> [AuthoritativeRecord] {
        switch publication.kind {
        case .host:
            return hostRecords(on: link)
        case .service(let registration):
            guard let instance = try? registration.type.prepending(label: publication.label) else { return [] }
            let target = registration.host ?? hostName
            var records = [
                AuthoritativeRecord(ResourceRecord(name: instance, ttl: MDNSConstants.hostRecordTTL,
                                                   data: .srv(SRVData(port: registration.port, target: target))), unique: true),
                AuthoritativeRecord(ResourceRecord(name: instance, ttl: MDNSConstants.otherRecordTTL, data: .txt(registration.txt)),
                                    unique: true),
                AuthoritativeRecord(ResourceRecord(name: registration.type, ttl: MDNSConstants.otherRecordTTL, data: .ptr(instance)),
                                    unique: false),
                AuthoritativeRecord(ResourceRecord(name: Self.serviceEnumerationName, ttl: MDNSConstants.otherRecordTTL,
                                                   data: .ptr(registration.type)), unique: false),
            ]
            for subtype in registration.subtypes {
                if let name = try? registration.type.prepending(label: "_sub").prepending(label: subtype) {
                    records.append(AuthoritativeRecord(ResourceRecord(name: name, ttl: MDNSConstants.otherRecordTTL,
                                                                      data: .ptr(instance)), unique: false))
                }
            }
            return records
        }
    }

    /// `_services._dns-sd._udp.local.` (RFC 6763 §9).
    static let serviceEnumerationName: DNSName = "_services._dns-sd._udp.local."

    /// A and AAAA records for every address of the link's interface, and their reverse PTRs (RFC 6762 §14:
    /// a link only hears about addresses of its own interface).
    func hostRecords(on link: LinkID) -> [AuthoritativeRecord] {
        let addresses = links.filter { $0.key.interfaceIndex == link.interfaceIndex }
            .sorted { $0.key < $1.key }.flatMap { $0.value.map(\.address) }
        var records: [AuthoritativeRecord] = []
        for address in addresses {
            records.append(AuthoritativeRecord(ResourceRecord(name: hostName, ttl: MDNSConstants.hostRecordTTL,
                                                              data: address.recordData), unique: true))
            records.append(AuthoritativeRecord(ResourceRecord(name: address.reverseName, ttl: MDNSConstants.hostRecordTTL,
                                                              data: .ptr(hostName)), unique: true))
        }
        return records
    }

    /// Creates, updates or removes the host's address publication after a change of links or addresses.
    mutating func refreshHostPublication() {
        let id = Self.hostPublication
        if publications[id] == nil {
            publications[id] = Publication(id: id, kind: .host, label: hostLabel)
        }
        for link in links.keys.sorted() {
            let wanted = hostRecords(on: link)
            let current = publications[id]!.records[link] ?? []
            if wanted.isEmpty {
                if !current.isEmpty { sendGoodbyes(for: id, on: link) }
                publications[id]!.phases[link] = nil
                publications[id]!.records[link] = nil
                authority.remove(owner: id, on: link)
            } else if publications[id]!.phases[link] == nil {
                startPublication(id, on: link)
            } else if Set(wanted) != Set(current) {
                // Our own addresses changed: goodbye for the ones gone, then probe the new set (never a rename).
                let gone = current.filter { !wanted.contains($0) }
                sendGoodbyes(gone.map(\.record), for: id, on: link)
                publications[id]!.records[link] = wanted
                publications[id]!.phases[link] = .probing(sent: 0, nextAt: now + random.milliseconds(in: configuration.probeInitialDelay))
                authority.set(wanted, owner: id, announced: false, on: link)
            }
        }
    }

    /// Begins probing a publication on a link.
    mutating func startPublication(_ id: OperationID, on link: LinkID) {
        guard var publication = publications[id] else { return }
        if case .service(let registration) = publication.kind,
           let only = registration.interfaceIndex, only != link.interfaceIndex { return }
        let records = records(of: publication, on: link)
        guard !records.isEmpty else { return }
        publication.records[link] = records
        publication.phases[link] = .probing(sent: 0, nextAt: now + random.milliseconds(in: configuration.probeInitialDelay))
        publications[id] = publication
        authority.set(records, owner: id, announced: false, on: link)
    }

    /// Recomputes a publication's records on a link after its data changed and announces them again.
    mutating func republish(_ id: OperationID, on link: LinkID) {
        guard var publication = publications[id] else { return }
        let old = publication.records[link] ?? []
        let new = records(of: publication, on: link)
        publication.records[link] = new
        let wasAnnounced = publication.phases[link]?.isAnnounced ?? false
        if wasAnnounced { publication.phases[link] = .announcing(sent: 0, nextAt: now) }
        publications[id] = publication
        authority.set(new, owner: id, announced: wasAnnounced, on: link)
        if wasAnnounced {
            let removed = old.filter { oldRecord in !new.contains { $0.record.key == oldRecord.record.key && $0.record.data == oldRecord.record.data } }
            var changes: [CacheChange] = []
            for record in removed { changes += caches[link]?.removeLocal(record.record) ?? [] }
            for record in new { changes += caches[link]?.insert(record.record, from: nil, at: now, isLocal: true) ?? [] }
            dispatch(changes, on: link)
        }
    }

    // MARK: - Probing and announcing

    /// Sends the probes and announcements that are due.
    mutating func runPublications() {
        for id in publications.keys.sorted() {
            for link in (publications[id]?.phases.keys.sorted() ?? []) {
                guard let phase = publications[id]?.phases[link], let due = phase.nextAt, due <= now else { continue }
                switch phase {
                case .probing(let sent, _) where sent < MDNSConstants.probeCount:
                    sendProbe(id, on: link, first: sent == 0)
                    publications[id]!.phases[link] = .probing(sent: sent + 1, nextAt: now + MDNSConstants.probeInterval)
                case .probing:
                    // 250 ms after the third probe without a conflict: the name is ours.
                    becomeAnnounced(id, on: link)
                case .announcing(let sent, _):
                    sendAnnouncement(id, on: link)
                    let next = sent + 1
                    publications[id]!.phases[link] = next < MDNSConstants.announcementCount
                        ? .announcing(sent: next, nextAt: now + MDNSConstants.announcementInterval << sent)
                        : .established
                case .established:
                    break
                }
            }
        }
    }

    private mutating func sendProbe(_ id: OperationID, on link: LinkID, first: Bool) {
        guard let publication = publications[id] else { return }
        let unique = publication.uniqueRecords(on: link).map { record -> ResourceRecord in
            var copy = record.record
            copy.cacheFlush = false  // proposed records in probes never carry the cache-flush bit
            return copy
        }
        guard !unique.isEmpty else { return }
        var writer = MessageWriter(limit: payloadLimit(for: link))
        for name in publication.claimedNames(on: link) {
            writer.append(DNSQuestion(name: name, type: .any, unicastResponse: first))
        }
        for record in unique { writer.append(record, to: .authority) }
        send(writer.message, on: link, to: .multicast)
    }

    /// Probing succeeded on a link: answer for the records from now on, tell local operations, and announce.
    private mutating func becomeAnnounced(_ id: OperationID, on link: LinkID) {
        guard let publication = publications[id], let records = publication.records[link] else { return }
        authority.set(records, owner: id, announced: true, on: link)
        var changes: [CacheChange] = []
        for record in records { changes += caches[link]?.insert(record.record, from: nil, at: now, isLocal: true) ?? [] }
        dispatch(changes, on: link)
        publications[id]!.phases[link] = .announcing(sent: 0, nextAt: now)
        sendAnnouncement(id, on: link)
        publications[id]!.phases[link] = .announcing(sent: 1, nextAt: now + MDNSConstants.announcementInterval)
        if !publication.reported, id != Self.hostPublication, let name = registeredName(of: id) {
            publications[id]!.reported = true
            emit(.deliver(id, .registered(name)))
        }
    }

    private mutating func sendAnnouncement(_ id: OperationID, on link: LinkID) {
        guard let records = publications[id]?.records[link]?.map(\.record), !records.isEmpty else { return }
        scheduler.noteMulticast(records, on: link, at: now)
        let builder = AnswerBuilder(authority: authority, link: link)
        let additionals = builder.additionals(for: records)
        for bytes in AnswerBuilder.pack(answers: records, additionals: additionals, limit: payloadLimit(for: link)) {
            statistics.responsesSent += 1
            send(bytes, on: link, to: .multicast)
        }
    }

    // MARK: - Conflicts

    /// Another host claims one of our unique names with different data (RFC 6762 §9). While probing, or
    /// when it happens again soon after, the publication is renamed (or fails, without auto-rename);
    /// an established publication first goes back to probing.
    mutating func conflict(_ id: OperationID, on link: LinkID) {
        guard var publication = publications[id], let phase = publication.phases[link] else { return }
        statistics.conflicts += 1
        publication.recentConflicts = publication.recentConflicts.filter { now - $0 < MDNSConstants.conflictRateWindow } + [now]
        publications[id] = publication
        if case .established = phase {
            // Defend by probing again; if the other host still answers, the probe phase renames.
            restartProbing(id, on: link, delay: 0)
            return
        }
        rename(id)
    }

    /// We lost a simultaneous-probe tie-break: wait one second and probe again (RFC 6762 §8.2).
    mutating func lostTieBreak(_ id: OperationID, on link: LinkID) {
        restartProbing(id, on: link, delay: MDNSConstants.probeTieBreakDelay)
    }

    private mutating func restartProbing(_ id: OperationID, on link: LinkID, delay: Int) {
        guard let publication = publications[id], let records = publication.records[link] else { return }
        var wait = delay
        if publication.recentConflicts.count >= MDNSConstants.conflictRateLimitCount {
            wait = max(wait, MDNSConstants.conflictRateLimitedInterval)
        }
        publications[id]!.phases[link] = .probing(sent: 0, nextAt: now + wait)
        authority.set(records, owner: id, announced: false, on: link)
    }

    /// Takes the next name and probes it on every link (`Name (2)`, `host-2` …), or fails the registration.
    private mutating func rename(_ id: OperationID) {
        guard var publication = publications[id] else { return }
        if case .service(let registration) = publication.kind, !registration.autoRename {
            withdraw(id, sendGoodbyes: false)
            emit(.deliver(id, .registrationFailed(.nameConflict)))
            return
        }
        publication.renames += 1
        let attempt = publication.renames + 1
        if id == Self.hostPublication {
            hostRenames += 1
            hostLabel = ServiceInstanceName.renamedHost(configuration.hostName, attempt: hostRenames + 1)
            publication.label = hostLabel
        } else if case .service(let registration) = publication.kind {
            let base = registration.instance.isEmpty ? configuration.hostName : registration.instance
            publication.label = ServiceInstanceName.renamed(base, attempt: attempt)
        }
        publication.reported = false
        publications[id] = publication
        for link in publication.phases.keys.sorted() {
            dropLocalRecords(of: id, on: link)
            let delay = publication.recentConflicts.count >= MDNSConstants.conflictRateLimitCount
                ? MDNSConstants.conflictRateLimitedInterval : random.milliseconds(in: configuration.probeInitialDelay)
            let records = records(of: publications[id]!, on: link)
            publications[id]!.records[link] = records
            publications[id]!.phases[link] = .probing(sent: 0, nextAt: now + delay)
            authority.set(records, owner: id, announced: false, on: link)
        }
        if id == Self.hostPublication {
            // Services on this host follow the new host name in their SRV targets.
            for other in publications.keys.sorted() where other != id {
                if case .service(let registration) = publications[other]!.kind, registration.host == nil {
                    for link in publications[other]!.phases.keys.sorted() { republish(other, on: link) }
                }
            }
        }
    }

    // MARK: - Withdrawal

    /// Withdraws a publication: goodbyes on every link where it was announced (RFC 6762 §10.1).
    mutating func withdraw(_ id: OperationID, sendGoodbyes goodbyes: Bool = true) {
        guard let publication = publications[id] else { return }
        for link in publication.phases.keys.sorted() {
            if goodbyes { sendGoodbyes(for: id, on: link) }
            dropLocalRecords(of: id, on: link)
            authority.remove(owner: id, on: link)
            scheduler.withdraw(publication.records[link]?.map(\.record) ?? [], on: link)
        }
        publications[id] = nil
    }

    private mutating func dropLocalRecords(of id: OperationID, on link: LinkID) {
        guard let records = publications[id]?.records[link] else { return }
        var changes: [CacheChange] = []
        for record in records { changes += caches[link]?.removeLocal(record.record) ?? [] }
        dispatch(changes, on: link)
    }

    /// Sends TTL-0 copies of a publication's records on a link, if it was announced there.
    mutating func sendGoodbyes(for id: OperationID, on link: LinkID) {
        guard let publication = publications[id], publication.phases[link]?.isAnnounced ?? false else { return }
        sendGoodbyes(publication.records[link]?.map(\.record) ?? [], for: id, on: link)
    }

    private mutating func sendGoodbyes(_ records: [ResourceRecord], for id: OperationID, on link: LinkID) {
        guard publications[id]?.phases[link]?.isAnnounced ?? false, !records.isEmpty else { return }
        let goodbyes = records.map { record -> ResourceRecord in
            var copy = record
            copy.ttl = 0
            return copy
        }
        for bytes in AnswerBuilder.pack(answers: goodbyes, additionals: [], limit: payloadLimit(for: link)) {
            statistics.responsesSent += 1
            send(bytes, on: link, to: .multicast)
        }
    }
}
