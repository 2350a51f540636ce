import HeraldWire

/// Records clients publish beyond a service's own: records added to a registration (DNSServiceAddRecord,
/// DNSServiceUpdateRecord, DNSServiceRemoveRecord) and records registered on their own (DNSServiceRegisterRecord).
/// Both go through the responder's publications: probing for unique ones, announcing, re-announcing an update
/// (RFC 6762 §8.4) and goodbyes (§10.1).
extension MDNSEngine {
    /// Publishes a record of the client's own under `id`: a unique one is probed, then announced (`.registered` with
    /// its name), or fails with `.registrationFailed(.nameConflict)`; a shared one is announced at once. Cancelling
    /// `id` withdraws it with a goodbye.
    public mutating func registerRecord(_ id: OperationID, _ registration: RecordRegistration, at time: Instant) {
        now = max(now, time)
        cancel(id, at: time)
        publications[id] = Publication(id: id, kind: .record(registration), label: "")
        for link in links.keys.sorted() { startPublication(id, on: link) }
    }

    /// Replaces the data and TTL of a record registered with ``registerRecord(_:_:at:)``; the new data is announced
    /// again without probing (RFC 6762 §8.4). Returns false when `id` is not such a registration.
    @discardableResult
    public mutating func updateRegisteredRecord(_ id: OperationID, data: RecordData, ttl: UInt32, at time: Instant) -> Bool {
        now = max(now, time)
        guard let publication = publications[id], case .record(var registration) = publication.kind,
              registration.record.type == (data.impliedType ?? registration.record.type) else { return false }
        registration.record.data = data
        registration.record.ttl = ttl
        publications[id]!.kind = .record(registration)
        for link in publication.phases.keys.sorted() { republish(id, on: link) }
        return true
    }

    /// Adds a record of the service instance's name to registration `id`, or replaces the data and TTL of the one
    /// added before with the same `record.id`. Announced (again) once the service is. Returns false when `id` is
    /// not a service registration.
    @discardableResult
    public mutating func addRecord(_ record: AddedRecord, to id: OperationID, at time: Instant) -> Bool {
        updateRegistration(id, at: time) { registration in
            if let index = registration.addedRecords.firstIndex(where: { $0.id == record.id }) {
                registration.addedRecords[index] = record
            } else {
                registration.addedRecords.append(record)
            }
        }
    }

    /// Replaces the data and TTL of a record added to registration `id` (DNSServiceUpdateRecord); announced again.
    /// Returns false when there is no such record.
    @discardableResult
    public mutating func updateAddedRecord(_ recordID: UInt64, in id: OperationID, data: RecordData, ttl: UInt32,
                                           at time: Instant) -> Bool {
        guard case .service(let registration) = publications[id]?.kind,
              let old = registration.addedRecords.first(where: { $0.id == recordID }) else { return false }
        return addRecord(AddedRecord(id: recordID, type: old.type, data: data, ttl: ttl), to: id, at: time)
    }

    /// Withdraws a record added to registration `id`, with a goodbye. Returns false when there is no such record.
    @discardableResult
    public mutating func removeAddedRecord(_ recordID: UInt64, from id: OperationID, at time: Instant) -> Bool {
        guard case .service(let registration) = publications[id]?.kind,
              registration.addedRecords.contains(where: { $0.id == recordID }) else { return false }
        return updateRegistration(id, at: time) { $0.addedRecords.removeAll { $0.id == recordID } }
    }

    /// Changes a service registration and publishes the change on every link (RFC 6762 §8.4).
    private mutating func updateRegistration(_ id: OperationID, at time: Instant,
                                             _ change: (inout ServiceRegistration) -> Void) -> Bool {
        now = max(now, time)
        guard let publication = publications[id], case .service(var registration) = publication.kind else { return false }
        change(&registration)
        publications[id]!.kind = .service(registration)
        for link in publication.phases.keys.sorted() { republish(id, on: link) }
        return true
    }
}
