import HeraldEngine
import HeraldIPC
import HeraldWire

/// Records beyond a service's own: DNSServiceRegisterRecord (a record on a shared connection, unique or shared),
/// DNSServiceAddRecord and DNSServiceUpdateRecord of an added record (on a service registration), and
/// DNSServiceRemoveRecord of either. The engine probes, announces and says goodbye; closing the connection cancels
/// its operations, and with them its records.
extension AppSocketServer {
    func registerRecord(_ request: RegisterRecordRequest, context: ClientContext, client: AppClient) -> DNSServiceError {
        let text = request.fullname.hasSuffix(".") ? request.fullname : request.fullname + "."
        guard let name = try? DNSName(text), name.hasSuffix("local.") else { return .badParam }
        // Exactly one of unique and shared (as the dnssd API requires), class IN, data that parse for the type.
        let unique = request.flags.contains(.unique)
        guard unique != request.flags.contains(.shared), request.rrclass == RecordClass.internet.rawValue,
              let data = Self.recordData(type: RecordType(request.rrtype), rdata: request.rdata)
        else { return .badParam }
        let record = ResourceRecord(name: name, type: RecordType(request.rrtype), ttl: Self.ttl(request.ttl, type: RecordType(request.rrtype)),
                                    data: data)
        let registration = RecordRegistration(record: record, unique: unique, interfaceIndex: interfaceFilter(request.interfaceIndex))
        let id = makeOperationID()
        // The permission to publish an arbitrary name is judged, for now, like asking for it.
        let status = begin(AppOperation(kind: .registerRecord(name: name, type: record.type), context: context, engineOperations: [id],
                                        start: { engine, now in engine.registerRecord(id, registration, at: now) },
                                        parked: false),
                           gated: .query(name: name, type: record.type), client: client)
        if status == .noError { client.recordContexts[request.recordIndex] = context }
        return status
    }

    func addRecord(_ request: AddRecordRequest, context: ClientContext, client: AppClient) -> DNSServiceError {
        guard let operation = client.operations[context], case .register = operation.kind else { return .badReference }
        guard !operation.parked, let id = operation.engineOperations.first else { return .badState }
        let type = RecordType(request.rrtype)
        guard let data = Self.recordData(type: type, rdata: request.rdata) else { return .badParam }
        let added = AddedRecord(id: UInt64(request.recordIndex), type: type, data: data, ttl: Self.ttl(request.ttl, type: type))
        client.addedRecordTypes[context, default: [:]][request.recordIndex] = type
        network.perform { engine, now in engine.addRecord(added, to: id, at: now) }
        return .noError
    }

    /// DNSServiceUpdateRecord of anything but a service's own TXT record: a record added to the registration the
    /// request names, or a record registered on the connection.
    func updateOtherRecord(_ request: UpdateRecordRequest, context: ClientContext, client: AppClient) -> DNSServiceError {
        let index = request.recordIndex
        if let operation = client.operations[context], case .register = operation.kind {
            guard let type = client.addedRecordTypes[context]?[index] else { return .badReference }
            guard !operation.parked, let id = operation.engineOperations.first else { return .badState }
            guard let data = Self.recordData(type: type, rdata: request.rdata) else { return .badParam }
            let ttl = Self.ttl(request.ttl, type: type)
            network.perform { engine, now in engine.updateAddedRecord(UInt64(index), in: id, data: data, ttl: ttl, at: now) }
            return .noError
        }
        guard let recordContext = client.recordContexts[index], let operation = client.operations[recordContext],
              case .registerRecord(_, let type) = operation.kind, let id = operation.engineOperations.first
        else { return .badReference }
        guard !operation.parked else { return .badState }
        guard let data = Self.recordData(type: type, rdata: request.rdata) else { return .badParam }
        let ttl = Self.ttl(request.ttl, type: type)
        network.perform { engine, now in engine.updateRegisteredRecord(id, data: data, ttl: ttl, at: now) }
        return .noError
    }

    /// DNSServiceRemoveRecord: a record added to the registration the request names (a goodbye for it alone), or a
    /// record registered on the connection (withdrawn with a goodbye).
    func removeRecord(_ request: RemoveRecordRequest, context: ClientContext, client: AppClient) -> DNSServiceError {
        let index = request.recordIndex
        if let operation = client.operations[context], case .register = operation.kind {
            guard client.addedRecordTypes[context]?.removeValue(forKey: index) != nil else { return .badReference }
            guard !operation.parked, let id = operation.engineOperations.first else { return .badState }
            network.perform { engine, now in engine.removeAddedRecord(UInt64(index), from: id, at: now) }
            return .noError
        }
        guard let recordContext = client.recordContexts.removeValue(forKey: index),
              let operation = client.operations.removeValue(forKey: recordContext), case .registerRecord = operation.kind
        else { return .badReference }
        network.perform { engine, now in
            for id in operation.engineOperations { engine.cancel(id, at: now) }
        }
        for id in operation.engineOperations { owners[id] = nil }
        return .noError
    }

    /// Record data given in wire form (names uncompressed) decoded for their type, or nil when they do not parse.
    static func recordData(type: RecordType, rdata: [UInt8]) -> RecordData? {
        guard rdata.count <= 0xFFFF else { return nil }
        // A one-record message around the data, read by the wire parser: the data then mean exactly what they
        // would if a peer had sent them.
        var message: [UInt8] = [0, 0, 0x84, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0]
        message += [UInt8(type.rawValue >> 8), UInt8(type.rawValue & 0xFF), 0, 1, 0, 0, 0, 120]
        message += [UInt8(rdata.count >> 8), UInt8(rdata.count & 0xFF)] + rdata
        guard let parsed = try? DNSMessage(parsing: message), let record = parsed.answers.first else { return nil }
        return record.data
    }

    /// The TTL a client asked for, or the RFC 6762 §10 default for the type when it gave 0.
    static func ttl(_ requested: UInt32, type: RecordType) -> UInt32 {
        if requested != 0 { return requested }
        return [.a, .aaaa, .srv].contains(type) ? MDNSConstants.hostRecordTTL : MDNSConstants.otherRecordTTL
    }
}
