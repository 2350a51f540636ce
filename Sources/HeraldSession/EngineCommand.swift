import HeraldEngine
import HeraldWire

/// What the sessions ask of the mDNS engine, as a value: the front end carries the commands out in order, in one
/// step of the engine. Every operation keeps the commands that start it, so the large cases (a registration, a
/// record) are boxed: a resolve's command takes 48 bytes, not the 120 a registration's would.
package enum EngineCommand: Hashable, Sendable, CustomStringConvertible {
    case browse(OperationID, type: DNSName, interface: Int?)
    case resolve(OperationID, instance: DNSName, interface: Int?)
    case query(OperationID, name: DNSName, type: RecordType, interface: Int?, negativeAnswers: Bool)
    indirect case register(OperationID, ServiceRegistration)
    indirect case registerRecord(OperationID, RecordRegistration)
    case updateTXT(OperationID, TXTRecord)
    case updateRecord(OperationID, data: RecordData, ttl: UInt32)
    case updateExtraRecords(OperationID, [ServiceExtraRecord])
    indirect case reconfirm(ResourceRecord, interface: Int?)
    /// Ends an operation (a registration says goodbye).
    case cancel(OperationID)

    /// Carries the command out on `engine`.
    package func apply(to engine: inout MDNSEngine, at now: Instant) {
        switch self {
        case .browse(let id, let type, let interface): engine.browse(id, type: type, interfaceIndex: interface, at: now)
        case .resolve(let id, let instance, let interface):
            engine.resolve(id, instance: instance, interfaceIndex: interface, at: now)
        case .query(let id, let name, let type, let interface, let negativeAnswers):
            engine.query(
                id, name: name, type: type, interfaceIndex: interface,
                reportingNegativeAnswers: negativeAnswers, at: now)
        case .register(let id, let registration): engine.register(id, registration, at: now)
        case .registerRecord(let id, let registration): engine.registerRecord(id, registration, at: now)
        case .updateTXT(let id, let txt): engine.updateTXT(id, txt: txt, at: now)
        case .updateRecord(let id, let data, let ttl): engine.updateRecord(id, data: data, ttl: ttl, at: now)
        case .updateExtraRecords(let id, let extras): engine.updateExtraRecords(id, extras, at: now)
        case .reconfirm(let record, let interface): engine.reconfirm(record, interfaceIndex: interface, at: now)
        case .cancel(let id): engine.cancel(id, at: now)
        }
    }

    /// The engine operation the command is about (nil for a reconfirmation).
    package var operation: OperationID? {
        switch self {
        case .browse(let id, _, _), .resolve(let id, _, _), .query(let id, _, _, _, _), .register(let id, _),
            .registerRecord(let id, _), .updateTXT(let id, _), .updateRecord(let id, _, _),
            .updateExtraRecords(let id, _), .cancel(let id):
            return id
        case .reconfirm:
            return nil
        }
    }

    package var description: String {
        switch self {
        case .browse(let id, let type, let interface): "\(id) browse \(type)\(Self.on(interface))"
        case .resolve(let id, let instance, let interface): "\(id) resolve \(instance)\(Self.on(interface))"
        case .query(let id, let name, let type, let interface, let negatives):
            "\(id) query \(name) \(type)\(Self.on(interface))\(negatives ? " with negative answers" : "")"
        case .register(let id, let registration):
            "\(id) register \"\(registration.instance)\" \(registration.type) port \(registration.port)"
        case .registerRecord(let id, let registration):
            "\(id) register record \(registration.name) \(registration.type)"
        case .updateTXT(let id, _): "\(id) update TXT"
        case .updateRecord(let id, _, let ttl): "\(id) update record, TTL \(ttl)"
        case .updateExtraRecords(let id, let extras): "\(id) set \(extras.count) added records"
        case .reconfirm(let record, let interface): "reconfirm \(record.name) \(record.type)\(Self.on(interface))"
        case .cancel(let id): "\(id) cancel"
        }
    }

    private static func on(_ interface: Int?) -> String { interface.map { " on \($0)" } ?? "" }
}
