import HeraldBroker
import HeraldEngine
import HeraldIPC
import HeraldWire

/// Individual records: records added to a registration (`DNSServiceAddRecord`), records registered by themselves
/// on a shared connection (`DNSServiceRegisterRecord`), their updates and their removal.
extension SessionCore {
    func registerRecord(_ request: RegisterRecordRequest, context: ClientContext, session: Session) -> DNSServiceError {
        if let refused = unservedInterface(request.interfaceIndex) { return refused }
        let text = request.fullname.hasSuffix(".") ? request.fullname : request.fullname + "."
        guard let name = try? DNSName(text), request.rrclass == 1 else { return .badParam }
        guard name.isMulticastDNSName else {
            return .unsupported
        }
        // Exactly one of unique (probed, defended) and shared.
        let unique = request.flags.contains(.unique)
        guard unique != request.flags.contains(.shared) else { return .badParam }
        let type = RecordType(request.rrtype)
        guard let data = try? RecordData.decode(type: type, uncompressed: request.rdata) else { return .badParam }
        guard fitsInOneMessage(request.rdata.count, ownedBy: name) else { return .badParam }
        guard session.recordContexts[request.recordIndex] == nil else { return .badParam }
        let ttl = Self.ttl(request.ttl, for: type)
        let registration = RecordRegistration(
            name: name, type: type, data: data, ttl: ttl, unique: unique,
            interfaceIndex: interfaceFilter(request.interfaceIndex))
        // Publishing a record is advertising: a service's records count as registering its type; any other
        // name (a host's address, the service type enumeration) is an arbitrary record, which needs the multicast
        // entitlement.
        let gated: PermissionRequest
        if ServiceType.isServiceEnumeration(name) {
            gated = .publishRecord(name: name, type: type)
        } else if let instance = try? ServiceInstanceName(fullName: name) {
            gated = .register(instance.type)
        } else if let serviceType = try? ServiceType(fullName: name) {
            gated = .register(serviceType)
        } else {
            gated = .publishRecord(name: name, type: type)
        }
        let id = makeOperationID()
        let status = begin(
            SessionOperation(
                kind: .record(name: name, type: type, index: request.recordIndex), context: context,
                engineOperations: [id], start: [.registerRecord(id, registration)]),
            gated: gated, session: session)
        if status == .noError { session.recordContexts[request.recordIndex] = context }
        return status
    }

    func addRecord(_ request: AddRecordRequest, context: ClientContext, session: Session) -> DNSServiceError {
        guard let operation = session.operations[context], case .register(let serviceType, _) = operation.kind else {
            return .badReference
        }
        guard request.recordIndex != UpdateRecordRequest.primaryTXTRecordIndex,
            operation.extras[request.recordIndex] == nil
        else { return .badParam }
        let type = RecordType(request.rrtype)
        guard let data = try? RecordData.decode(type: type, uncompressed: request.rdata) else { return .badParam }
        guard fitsInOneMessage(request.rdata.count, ofServiceType: serviceType) else { return .badParam }
        guard operation.extras.count < limits.recordsPerRegistration else {
            log(
                .notice,
                "app socket: client \(session.id) reached the limit of \(limits.recordsPerRegistration) records added to a registration"
            )
            return .noMemory
        }
        operation.extras[request.recordIndex] = ServiceExtraRecord(
            type: type, data: data, ttl: request.ttl == 0 ? nil : Self.ttl(request.ttl, for: type))
        applyExtras(operation)
        return .noError
    }

    func removeRecord(_ request: RemoveRecordRequest, context: ClientContext, session: Session) -> DNSServiceError {
        if let operation = session.operations[context], case .register = operation.kind,
            operation.extras.removeValue(forKey: request.recordIndex) != nil
        {
            applyExtras(operation)
            return .noError
        }
        guard let recordContext = session.recordContexts.removeValue(forKey: request.recordIndex) else {
            return .badReference
        }
        cancel(recordContext, of: session)  // withdrawn with a goodbye
        return .noError
    }

    /// `DNSServiceUpdateRecord`: a registration's own TXT record (the primary record index), a record added to it,
    /// or a record registered by itself. Changes are announced again (RFC 6762 §8.4).
    func updateRecord(_ request: UpdateRecordRequest, context: ClientContext, session: Session) -> DNSServiceError {
        if let operation = session.operations[context], case .register(let serviceType, _) = operation.kind {
            guard fitsInOneMessage(request.rdata.count, ofServiceType: serviceType) else {
                return .badParam
            }
            if request.recordIndex == UpdateRecordRequest.primaryTXTRecordIndex {
                let txt: TXTRecord
                if request.rdata.isEmpty {
                    txt = .empty
                } else {
                    guard let parsed = try? TXTRecord(rdata: request.rdata) else { return .badParam }
                    txt = parsed
                }
                operation.updatedTXT = txt
                if !operation.parked, let id = operation.engineOperations.first {
                    engineCommands.append(.updateTXT(id, txt))
                }
                return .noError
            }
            if let extra = operation.extras[request.recordIndex] {
                guard let data = try? RecordData.decode(type: extra.type, uncompressed: request.rdata) else {
                    return .badParam
                }
                operation.extras[request.recordIndex] = ServiceExtraRecord(
                    type: extra.type, data: data,
                    ttl: request.ttl == 0 ? extra.ttl : Self.ttl(request.ttl, for: extra.type))
                applyExtras(operation)
                return .noError
            }
        }
        guard let recordContext = session.recordContexts[request.recordIndex],
            let operation = session.operations[recordContext], case .record(let name, let type, _) = operation.kind
        else { return .badReference }
        guard let data = try? RecordData.decode(type: type, uncompressed: request.rdata) else { return .badParam }
        guard fitsInOneMessage(request.rdata.count, ownedBy: name) else { return .badParam }
        let ttl = Self.ttl(request.ttl, for: type)
        guard let id = operation.engineOperations.first else { return .badReference }
        operation.updatedRecord = (data, ttl)
        if !operation.parked {
            engineCommands.append(.updateRecord(id, data: data, ttl: ttl))
        }
        return .noError
    }

    /// Hands a running registration's added records to the engine (a parked one gets them when it starts).
    private func applyExtras(_ operation: SessionOperation) {
        guard !operation.parked, let id = operation.engineOperations.first else { return }
        engineCommands.append(.updateExtraRecords(id, operation.sortedExtras))
    }

    /// The TTL an app asked for, or the default for the type when it gave 0; at most 2³¹−1 seconds, since a receiver
    /// reads a TTL with its top bit set as zero (RFC 2181 §8): a goodbye.
    package static func ttl(_ requested: UInt32, for type: RecordType) -> UInt32 {
        requested == 0 ? defaultTTL(for: type) : min(requested, UInt32(Int32.max))
    }

    /// The TTL a record gets when the client leaves it 0: 120 s for records that carry a host name, 4500 s for
    /// the others (RFC 6762 §10).
    package static func defaultTTL(for type: RecordType) -> UInt32 {
        [.a, .aaaa, .srv, .hinfo].contains(type) ? MDNSConstants.hostRecordTTL : MDNSConstants.otherRecordTTL
    }

    /// True when a record with `dataCount` bytes of data, owned by `name`, can be sent at all. A record too big for
    /// one message would go out without it, so a service could be browsed but never resolved: such requests are
    /// refused (BadParam) instead.
    func fitsInOneMessage(_ dataCount: Int, ownedBy name: DNSName) -> Bool {
        dataCount <= messageSizeLimit.largestRecordData(ownerLength: name.wireLength)
    }

    /// The same for a record of a service of `type` (its TXT record, say), under any name the service may get.
    func fitsInOneMessage(_ dataCount: Int, ofServiceType type: ServiceType) -> Bool {
        dataCount <= messageSizeLimit.largestServiceRecordData(type: type.fullName)
    }
}
