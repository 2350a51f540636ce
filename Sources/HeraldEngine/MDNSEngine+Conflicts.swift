import HeraldWire

/// What the responder does when another host claims its names: simultaneous-probe tie-breaks (RFC 6762 §8.2),
/// conflicts while probing and after (§9), renaming (`Name (2)`, `host-2`) and the conflict rate limit (§8.1).
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
            publication.renames += 1
            hostRenames += 1
            hostLabel = ServiceInstanceName.renamedHost(configuration.hostName, attempt: hostRenames + 1)
            publication.label = hostLabel
            // Services named after the host are registered again under the new name: like everything a conflict
            // sets off, they probe on §8.1's full schedule.
            for link in links.keys { linkEvents[link] = now }
        }
        publication.reported = false
        publication.probeSent = []
        publications[id] = publication
        // A service's next name skips those this host's other services hold.
        if case .service = publication.kind { takeNextFreeName(id) }
        publication = publications[id]!
        for link in publication.phases.keys.sorted() {
            dropLocalRecords(of: id, on: link)
            scheduler.withdraw(publication.records[link]?.map(\.record) ?? [], on: link)
            let delay = conflictLimiter.delay(random.milliseconds(in: configuration.probeInitialDelay), at: now)
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
}
