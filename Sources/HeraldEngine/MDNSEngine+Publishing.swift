import HeraldWire

/// The responder's publications: registering, probing (RFC 6762 §8.1), announcing (§8.3) and updating (§8.4).
/// Conflicts and renaming are in `MDNSEngine+Conflicts.swift`, withdrawal and goodbyes in `MDNSEngine+Goodbyes.swift`.
extension MDNSEngine {
    /// Registers a service; `.registered(name)` follows once its name is probed and announced. A name another
    /// registration on this host holds is a conflict found before any probe: the service takes the next free name
    /// (`Name (2)` …), or fails at once without auto-rename.
    package mutating func register(_ id: OperationID, _ registration: ServiceRegistration, at time: Instant) {
        now = max(now, time)
        cancel(id, at: time)
        let label = registration.instance.isEmpty ? hostLabel : registration.instance
        publications[id] = Publication(id: id, kind: .service(registration), label: label)
        if let name = registeredName(of: id), isClaimedByAnother(name, than: id) {
            guard registration.autoRename else {
                publications[id] = nil
                emit(.deliver(id, .registrationFailed(.nameConflict)))
                return
            }
            takeNextFreeName(id)
        }
        for link in links.keys.sorted() { startPublication(id, on: link, requested: true) }
    }

    /// True when another of this host's services, or a unique record it registered by itself, holds `name`
    /// (names compare ignoring ASCII case): one host must not publish two answers for one unique name.
    func isClaimedByAnother(_ name: DNSName, than id: OperationID) -> Bool {
        let wanted = name.lowercased
        for (other, publication) in publications where other != id {
            switch publication.kind {
            case .service: if registeredName(of: other)?.lowercased == wanted { return true }
            case .record(let record): if record.unique && record.name.lowercased == wanted { return true }
            case .host: continue
            }
        }
        return false
    }

    /// Gives a service the next candidate name (`Name (2)`, `Name (3)` …) that no other publication here holds.
    mutating func takeNextFreeName(_ id: OperationID) {
        guard var publication = publications[id], case .service(let registration) = publication.kind else { return }
        let base = registration.instance.isEmpty ? hostBaseLabel : registration.instance
        repeat {
            publication.renames += 1
            publication.label = ServiceInstanceName.renamed(base, attempt: publication.renames + 1)
            publications[id] = publication
        } while registeredName(of: id).map { isClaimedByAnother($0, than: id) } ?? false
    }

    /// Replaces a registration's TXT record; the new data is announced again without probing (RFC 6762 §8.4).
    package mutating func updateTXT(_ id: OperationID, txt: TXTRecord, at time: Instant) {
        now = max(now, time)
        guard var publication = publications[id], case .service(var registration) = publication.kind else { return }
        registration.txt = txt
        publication.kind = .service(registration)
        publications[id] = publication
        for link in publication.phases.keys.sorted() { republish(id, on: link) }
    }

    /// Replaces the records added to a registration (`DNSServiceAddRecord`, `UpdateRecord`, `RemoveRecord`): new
    /// and changed ones are announced, removed ones get goodbyes (RFC 6762 §8.4, §10.1).
    package mutating func updateExtraRecords(_ id: OperationID, _ extras: [ServiceExtraRecord], at time: Instant) {
        now = max(now, time)
        guard var publication = publications[id], case .service(var registration) = publication.kind else { return }
        registration.extraRecords = extras
        publication.kind = .service(registration)
        publications[id] = publication
        for link in publication.phases.keys.sorted() { republish(id, on: link) }
    }

    /// Publishes one record by itself (`DNSServiceRegisterRecord`); `.registered(name)` follows once it is
    /// announced, `.registrationFailed(.nameConflict)` if a unique one meets a conflict.
    package mutating func registerRecord(_ id: OperationID, _ record: RecordRegistration, at time: Instant) {
        now = max(now, time)
        cancel(id, at: time)
        let label = record.name.firstLabel.map { String(decoding: $0, as: UTF8.self) } ?? ""
        publications[id] = Publication(id: id, kind: .record(record), label: label)
        for link in links.keys.sorted() { startPublication(id, on: link, requested: true) }
    }

    /// Changes a record registered by itself (`DNSServiceUpdateRecord`): announced again, without probing.
    package mutating func updateRecord(_ id: OperationID, data: RecordData, ttl: UInt32, at time: Instant) {
        now = max(now, time)
        guard var publication = publications[id], case .record(var record) = publication.kind else { return }
        record.data = data
        record.ttl = ttl
        publication.kind = .record(record)
        publications[id] = publication
        for link in publication.phases.keys.sorted() { republish(id, on: link) }
    }

    /// The registration's current full instance name (or a registered record's name), once known.
    package func registeredName(of id: OperationID) -> DNSName? {
        guard let publication = publications[id] else { return nil }
        switch publication.kind {
        case .service(let registration): return try? registration.type.prepending(label: publication.label)
        case .record(let record): return record.name
        case .host: return nil
        }
    }

    // MARK: - Records

    /// The records a publication puts on a link.
    func records(of publication: Publication, on link: LinkID) -> [AuthoritativeRecord] {
        switch publication.kind {
        case .host:
            return hostRecords(on: link)
        case .record(let record):
            return [
                AuthoritativeRecord(
                    ResourceRecord(name: record.name, type: record.type, ttl: record.ttl, data: record.data),
                    unique: record.unique)
            ]
        case .service(let registration):
            guard let instance = try? registration.type.prepending(label: publication.label) else { return [] }
            let target = registration.host ?? hostName
            let srv = SRVData(
                priority: registration.priority, weight: registration.weight, port: registration.port, target: target)
            var records = [
                AuthoritativeRecord(
                    ResourceRecord(name: instance, ttl: MDNSConstants.hostRecordTTL, data: .srv(srv)), unique: true),
                AuthoritativeRecord(
                    ResourceRecord(name: instance, ttl: MDNSConstants.otherRecordTTL, data: .txt(registration.txt)),
                    unique: true),
                AuthoritativeRecord(
                    ResourceRecord(name: registration.type, ttl: MDNSConstants.otherRecordTTL, data: .ptr(instance)),
                    unique: false),
                AuthoritativeRecord(
                    ResourceRecord(
                        name: Self.serviceEnumerationName, ttl: MDNSConstants.otherRecordTTL,
                        data: .ptr(registration.type)), unique: false),
            ]
            for txt in registration.additionalTXT where txt != registration.txt {
                records.append(
                    AuthoritativeRecord(
                        ResourceRecord(name: instance, ttl: MDNSConstants.otherRecordTTL, data: .txt(txt)),
                        unique: true))
            }
            for extra in registration.extraRecords {
                let ttl = extra.ttl ?? MDNSConstants.otherRecordTTL
                records.append(
                    AuthoritativeRecord(
                        ResourceRecord(name: instance, type: extra.type, ttl: ttl, data: extra.data),
                        unique: true))
            }
            for subtype in registration.subtypes {
                if let name = try? registration.type.prepending(label: "_sub").prepending(label: subtype) {
                    records.append(
                        AuthoritativeRecord(
                            ResourceRecord(
                                name: name, ttl: MDNSConstants.otherRecordTTL,
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
            records.append(
                AuthoritativeRecord(
                    ResourceRecord(
                        name: hostName, ttl: MDNSConstants.hostRecordTTL,
                        data: address.recordData), unique: true))
            records.append(
                .knownUnique(
                    ResourceRecord(
                        name: address.reverseName, ttl: MDNSConstants.hostRecordTTL,
                        data: .ptr(hostName))))
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

    /// Begins probing a publication on a link, from the start: after a random wait (RFC 6762 §8.1), or five
    /// seconds while conflicts are being rate-limited. The wait is 0–250 ms, or 20–120 ms for a client's
    /// registration (`requested`) on a link that has settled (``MDNSConstants/linkSettleTime``). When another
    /// publication's first probe is due within the wait's longest, this one joins it, so that registrations made
    /// together probe and announce in the same packets.
    mutating func startPublication(_ id: OperationID, on link: LinkID, requested: Bool = false) {
        guard var publication = publications[id] else { return }
        if case .service(let registration) = publication.kind {
            if let only = registration.interfaceIndex, only != link.interfaceIndex { return }
            if let family = registration.family, family != link.family { return }
        }
        if case .record(let record) = publication.kind, let only = record.interfaceIndex, only != link.interfaceIndex {
            return
        }
        let records = records(of: publication, on: link)
        guard !records.isEmpty else { return }
        publication.records[link] = records
        let settled = linkEvents[link].map { now - $0 >= MDNSConstants.linkSettleTime } ?? false
        let range = requested && settled ? configuration.requestedProbeDelay : configuration.probeInitialDelay
        let wait = conflictLimiter.delay(random.milliseconds(in: range), at: now)
        var firstProbe = now + wait
        if wait <= range.upperBound {
            if let pending = firstProbes[link], pending >= now, pending <= now + range.upperBound {
                firstProbe = pending
            }
            firstProbes[link] = firstProbe
        }
        // Shared records alone are not probed (RFC 6762 §8.1): they are announced after the same short wait.
        let sent = records.contains(where: \.isUnique) ? 0 : MDNSConstants.probeCount
        publication.phases[link] = .probing(sent: sent, nextAt: firstProbe)
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
            let goodbyes = removed.filter { gone in !gone.isUnique || !new.contains { $0.record.key == gone.record.key }
            }
            sendGoodbyes(goodbyes.map(\.record), for: id, on: link, keepingShared: true)
            var changes: [CacheChange] = []
            for record in removed where !authority.isPublished(record.record, on: link, byOtherThan: id) {
                changes += removeLocalRecord(record.record, on: link)
            }
            for record in new {
                changes += caches[link]?.insert(record.record, at: now, isLocal: true) ?? []
            }
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
                    publications[id]!.phases[link] =
                        next < MDNSConstants.announcementCount
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
            registration.host == nil
        else { return false }
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
        let unique = publication.probedRecords(on: link).map { record -> ResourceRecord in
            var copy = record.record
            copy.cacheFlush = false  // proposed records in probes never carry the cache-flush bit
            return copy
        }
        guard !unique.isEmpty else { return }
        // RFC 6762 §8.1: the first probe asks for a unicast reply, which a defender can send at once.
        let questions = publication.claimedNames(on: link).map {
            DNSQuestion(name: $0, type: .any, unicastResponse: first)
        }
        queueProbe(MulticastBatch.Probe(questions: questions, proposed: unique), on: link)
        publications[id]!.probeSent.insert(link)
        if first { lastUnicastQuestion[link] = now }
    }

    /// Probing succeeded on a link: answer for the records from now on, tell local operations, and announce.
    private mutating func becomeAnnounced(_ id: OperationID, on link: LinkID) {
        guard let publication = publications[id], let records = publication.records[link] else { return }
        authority.set(records, owner: id, announced: true, on: link)
        var changes: [CacheChange] = []
        for record in records {
            changes += caches[link]?.insert(record.record, at: now, isLocal: true) ?? []
        }
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
        queueAnnouncement(records, on: link)
    }
}
