import HeraldWire

/// The responder's publications: registering, probing (RFC 6762 §8.1), announcing (§8.3) and updating (§8.4).
/// Conflicts and renaming are in `MDNSEngine+Conflicts.swift`, withdrawal and goodbyes in `MDNSEngine+Goodbyes.swift`.
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
        switch publications[id]?.kind {
        case .service(let registration): return try? registration.type.prepending(label: publications[id]!.label)
        case .record(let registration): return registration.record.name
        case .host, nil: return nil
        }
    }

    // MARK: - Records

    /// The records a publication puts on a link.
    func records(of publication: Publication, on link: LinkID) -> [AuthoritativeRecord] {
        switch publication.kind {
        case .host:
            return hostRecords(on: link)
        case .record(let registration):
            return [AuthoritativeRecord(registration.record, unique: registration.unique)]
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
            for added in registration.addedRecords {
                records.append(AuthoritativeRecord(ResourceRecord(name: instance, type: added.type, ttl: added.ttl, data: added.data),
                                                   unique: true))
            }
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

    /// A and AAAA records for every address of the link's interface, and their reverse PTRs (RFC 6762 §6.2:
    /// a link only hears about addresses of its own interface, both families, as one interface).
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

    /// Creates, updates or removes the host's address publication after a change of links or addresses. A change
    /// of addresses once the name is ours is an update, announced again (RFC 6762 §8.4); before, the new set is
    /// probed from the start.
    mutating func refreshHostPublication() {
        let id = Self.hostPublication
        if publications[id] == nil {
            publications[id] = Publication(id: id, kind: .host, label: hostLabel)
        }
        for link in links.keys.sorted() {
            let wanted = hostRecords(on: link)
            let current = publications[id]!.records[link] ?? []
            if wanted.isEmpty {
                if !current.isEmpty { sendGoodbyes(for: [id], on: link, keepingShared: true) }
                dropLocalRecords(of: id, on: link)
                publications[id]!.phases[link] = nil
                publications[id]!.records[link] = nil
                publications[id]!.probeSent.remove(link)
                authority.remove(owner: id, on: link)
                releaseWaitingServices(on: link)
            } else if publications[id]!.phases[link] == nil {
                startPublication(id, on: link)
            } else if Set(wanted) != Set(current) {
                if publications[id]!.phases[link]!.isAnnounced {
                    republish(id, on: link)
                } else {
                    startPublication(id, on: link)
                }
            }
        }
    }

    /// Begins probing a publication on a link, from the start: after 0–250 ms (RFC 6762 §8.1), or five seconds
    /// while conflicts are being rate-limited.
    mutating func startPublication(_ id: OperationID, on link: LinkID) {
        guard var publication = publications[id] else { return }
        if let only = publication.interfaceIndex, only != link.interfaceIndex { return }
        let records = records(of: publication, on: link)
        guard !records.isEmpty else { return }
        publication.records[link] = records
        if records.contains(where: \.isUnique) {
            let wait = conflictLimiter.delay(random.milliseconds(in: configuration.probeInitialDelay), at: now)
            publication.phases[link] = .probing(sent: 0, nextAt: now + wait)
        } else {
            // Only shared records: nothing to probe (RFC 6762 §8.1), announced at the next tick.
            publication.phases[link] = .probing(sent: MDNSConstants.probeCount, nextAt: now)
        }
        publication.probeSent.remove(link)
        publications[id] = publication
        authority.set(records, owner: id, announced: false, on: link)
    }

    /// Recomputes a publication's records on a link after its data changed and, if they were announced, announces
    /// them again (RFC 6762 §8.4). Records that went away get a goodbye when they were shared, or when nothing
    /// replaces their set; a unique set that changed is flushed from peers' caches by the new announcement.
    mutating func republish(_ id: OperationID, on link: LinkID) {
        guard var publication = publications[id] else { return }
        let old = publication.records[link] ?? []
        let new = records(of: publication, on: link)
        let wasAnnounced = publication.phases[link]?.isAnnounced ?? false
        let removed = old.filter { oldRecord in
            !new.contains { $0.record.key == oldRecord.record.key && $0.record.data == oldRecord.record.data }
        }
        if wasAnnounced {
            let goodbyes = removed.filter { gone in !gone.isUnique || !new.contains { $0.record.key == gone.record.key } }
            sendGoodbyes(goodbyes.map(\.record), for: id, on: link, keepingShared: true)
            var changes: [CacheChange] = []
            for record in removed where !authority.isPublished(record.record, on: link, byOtherThan: id) {
                changes += caches[link]?.removeLocal(record.record) ?? []
            }
            for record in new { changes += caches[link]?.insert(record.record, from: nil, at: now, isLocal: true) ?? [] }
            publication.phases[link] = .announcing(sent: 0, nextAt: now)
            publications[id] = publication
            publications[id]!.records[link] = new
            authority.set(new, owner: id, announced: true, on: link)
            scheduler.withdraw(removed.map(\.record), on: link)
            dispatch(changes, on: link)
        } else {
            publication.records[link] = new
            publications[id] = publication
            authority.set(new, owner: id, announced: false, on: link)
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
                    if waitsForHostName(id, on: link) {
                        publications[id]!.phases[link] = .probed
                    } else {
                        becomeAnnounced(id, on: link)
                    }
                case .announcing(let sent, _):
                    sendAnnouncement(id, on: link)
                    let next = sent + 1
                    publications[id]!.phases[link] = next < MDNSConstants.announcementCount
                        ? .announcing(sent: next, nextAt: now + MDNSConstants.announcementInterval << sent)
                        : .established
                case .probed, .established:
                    break
                }
            }
        }
    }

    /// True for a service on this host whose host name is still being probed on the link.
    private func waitsForHostName(_ id: OperationID, on link: LinkID) -> Bool {
        guard id != Self.hostPublication, case .service(let registration) = publications[id]?.kind,
              registration.host == nil else { return false }
        return publications[Self.hostPublication]?.phases[link]?.isProbing ?? false
    }

    /// Announces the services that were waiting for the host name on a link.
    private mutating func releaseWaitingServices(on link: LinkID) {
        for id in publications.keys.sorted() where publications[id]?.phases[link] == .probed {
            becomeAnnounced(id, on: link)
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
            // RFC 6762 §8.1: the first probe asks for a unicast reply, which a defender can send at once.
            writer.append(DNSQuestion(name: name, type: .any, unicastResponse: first))
        }
        for record in unique { writer.append(record, to: .authority) }
        publications[id]!.probeSent.insert(link)
        if first { lastUnicastQuestion[link] = now }
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
        // Reported once the name is announced on every link it is published on: until then a client told
        // "registered" could ask over the other IP family and get no answer.
        let everywhere = publications[id]!.phases.values.allSatisfy(\.isAnnounced)
        if everywhere, !publication.reported, id != Self.hostPublication, let name = registeredName(of: id) {
            publications[id]!.reported = true
            emit(.deliver(id, .registered(name)))
        }
        if id == Self.hostPublication { releaseWaitingServices(on: link) }
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
}
