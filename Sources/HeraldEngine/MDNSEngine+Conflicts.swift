import HeraldWire

/// What the responder does when another host claims its names: simultaneous-probe tie-breaks (RFC 6762 §8.2),
/// conflicts while probing and after (§9), renaming (`Name (2)`, `host-2`) and the conflict rate limit (§8.1); an
/// operator's change of host name shares the host's rename.
/// Whether a record conflicts is decided in `Responder/ConflictDetection.swift`.
extension MDNSEngine {
    /// Another host claims one of our unique names with different data (RFC 6762 §9). A publication still
    /// probing takes the next name (or fails, without auto-rename). An announced one goes back to probing, and
    /// is renamed only if the conflict shows again then.
    mutating func conflict(_ id: OperationID, on link: LinkID) {
        guard let phase = publications[id]?.phases[link] else { return }
        statistics.conflicts += 1
        conflictLimiter.record(at: now)
        if phase.isAnnounced {
            publications[id]!.probeSent.remove(link)
            restartProbing(id, on: link, delay: 0)
        } else {
            rename(id)
        }
    }

    /// We lost a simultaneous-probe tie-break: wait one second and probe again (RFC 6762 §8.2). The other host's
    /// probe is live evidence of a contender, not stale data, so its announcement during the wait is a conflict
    /// (even if our own first probe had not gone out yet).
    mutating func lostTieBreak(_ id: OperationID, on link: LinkID) {
        publications[id]?.probeSent.insert(link)
        restartProbing(id, on: link, delay: MDNSConstants.probeTieBreakDelay)
    }

    mutating func restartProbing(_ id: OperationID, on link: LinkID, delay: Int) {
        guard let publication = publications[id], let records = publication.records[link] else { return }
        publications[id]!.phases[link] = .probing(sent: 0, nextAt: now + conflictLimiter.delay(delay, at: now))
        authority.set(records, owner: id, announced: false, on: link)
        scheduler.withdraw(records.map(\.record), on: link)
    }

    /// Takes the next name and probes it on every link (`Name (2)`, `host-2` …), or fails the registration.
    mutating func rename(_ id: OperationID) {
        guard var publication = publications[id] else { return }
        let renames: Bool
        switch publication.kind {
        case .service(let registration): renames = registration.autoRename
        case .host: renames = true
        case .record: renames = false  // a record registered by itself keeps its name or fails
        }
        if !renames {
            withdraw(id, sendGoodbyes: false)
            emit(.deliver(id, .registrationFailed(.nameConflict)))
            return
        }
        if id == Self.hostPublication {
            hostRenames += 1
            moveHost(to: ServiceInstanceName.renamedHost(hostBaseLabel, attempt: hostRenames + 1))
            return
        }
        publication.reported = false
        publication.probeSent = []
        publications[id] = publication
        // A service's next name skips those this host's other services hold.
        if case .service = publication.kind { takeNextFreeName(id) }
        probeAgain(id)
    }

    /// Takes another host name at an operator's request (Avahi's `SetHostName`): goodbyes for the address records
    /// and reverse PTRs of the old name on every link where they were announced (RFC 6762 §10.1), then the new
    /// name is probed and announced as after a conflict, services on this host following in their SRV targets. A
    /// conflict on the new name renames it as usual (`new-2`), counting from the new name. Services registered
    /// without a name, which are named after the host (dns_sd.h's default name), say goodbye and take the new name
    /// too (a conflict does not rename them: the name the operator gave stays what they are named after). A label
    /// that cannot be a host name's first label, or the name in use, changes nothing.
    package mutating func setHostName(_ label: String, at time: Instant) {
        now = max(now, time)
        guard !isShutDown, label != hostLabel, !label.isEmpty, !label.contains("."),
            (try? DNSName(labels: [Array(label.utf8), Array("local".utf8)])) != nil
        else { return }
        hostBaseLabel = label
        hostRenames = 0
        let unnamed = publications.keys.sorted().filter { id in
            if case .service(let registration) = publications[id]!.kind { return registration.instance.isEmpty }
            return false
        }
        for link in links.keys.sorted() {
            sendGoodbyes(for: [Self.hostPublication] + unnamed, on: link, keepingShared: true)
        }
        for id in unnamed {
            publications[id]!.label = label
            publications[id]!.renames = 0
            publications[id]!.reported = false
            publications[id]!.probeSent = []
            if let name = registeredName(of: id), isClaimedByAnother(name, than: id) { takeNextFreeName(id) }
            probeAgain(id)
        }
        moveHost(to: label)
    }

    /// The host takes the name `label`: its address records are probed from the start on every link, and the
    /// services on this host follow in their SRV targets.
    private mutating func moveHost(to label: String) {
        hostLabel = label
        // Services named after the host are registered again under the new name: like everything a conflict or a
        // change of name sets off, they probe on §8.1's full schedule.
        for link in links.keys { linkEvents[link] = now }
        let id = Self.hostPublication
        if var publication = publications[id] {
            publication.renames += 1
            publication.label = label
            publication.reported = false
            publication.probeSent = []
            publications[id] = publication
            probeAgain(id)
        }
        for other in publications.keys.sorted() where other != id {
            if case .service(let registration) = publications[other]!.kind, registration.host == nil {
                for link in publications[other]!.phases.keys.sorted() { republish(other, on: link) }
            }
        }
    }

    /// Probes a publication's records, recomputed under its new name, on every link it is published on.
    private mutating func probeAgain(_ id: OperationID) {
        guard let publication = publications[id] else { return }
        for link in publication.phases.keys.sorted() {
            dropLocalRecords(of: id, on: link)
            scheduler.withdraw(publication.records[link]?.map(\.record) ?? [], on: link)
            let delay = conflictLimiter.delay(random.milliseconds(in: configuration.probeInitialDelay), at: now)
            let records = records(of: publications[id]!, on: link)
            publications[id]!.records[link] = records
            publications[id]!.phases[link] = .probing(sent: 0, nextAt: now + delay)
            authority.set(records, owner: id, announced: false, on: link)
        }
    }
}
