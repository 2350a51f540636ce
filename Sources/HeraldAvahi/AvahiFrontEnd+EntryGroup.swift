import HeraldIPC
import HeraldWire

/// Entry groups: services gathered, then committed as dnssd registrations that never rename themselves (a
/// conflict is the group's collision, and the client picks the new name, as with Avahi).
extension AvahiFrontEnd {
    func entryGroupCall(_ member: String, _ arguments: inout DBusArguments, group: AvahiObject)
        throws(AvahiError) -> AvahiCallResult
    {
        guard group.kind == .entryGroup else { throw .unknownMethod(member, group.interfaceName) }
        switch member {
        case "GetState": return .reply([.int32(group.state.rawValue)])
        case "IsEmpty": return .reply([.boolean(group.services.isEmpty && group.records.isEmpty)])
        case "Reset":
            withdraw(group)
            group.services.removeAll()
            group.records.removeAll()
            setState(group, .uncommitted)
            return .reply([])
        case "Commit":
            try commit(group)
            return .reply([])
        case "AddService":
            try addService(&arguments, to: group)
            return .reply([])
        case "AddServiceSubtype":
            try addSubtype(&arguments, to: group)
            return .reply([])
        case "UpdateServiceTxt":
            try updateTXT(&arguments, in: group)
            return .reply([])
        case "AddAddress":
            try addAddress(&arguments, to: group)
            return .reply([])
        case "AddRecord":
            try addRecord(&arguments, to: group)
            return .reply([])
        default:
            throw .unknownMethod(member, group.interfaceName)
        }
    }

    private struct ServiceKey {
        var interface: UInt32
        var name: String
        var type: String
        var domain: String
    }

    private func readKey(_ arguments: inout DBusArguments) throws(AvahiError) -> ServiceKey {
        let interface = try arguments.int32()
        let proto = try arguments.int32()
        let flags = AvahiPublishFlags(rawValue: try arguments.uint32())
        let name = try arguments.string()
        let type = try arguments.string()
        let domain = try arguments.string()
        guard let index = AvahiInterface.dnssdIndex(interface) else { throw .invalidInterface }
        guard AvahiProtocol(rawValue: proto) != nil else { throw .invalidProtocol }
        guard AvahiPublishFlags.known.isSuperset(of: flags) else { throw .invalidFlags }
        guard !flags.contains(.useWideArea) else { throw .notSupported }
        let lowered = AvahiNames.undotted(domain).lowercased()
        guard lowered.isEmpty || lowered == "local" else { throw .notSupported }
        guard !name.isEmpty, name.utf8.count <= 63 else { throw .invalidServiceName }
        guard (try? ServiceType(type)) != nil else { throw .invalidServiceType }
        return ServiceKey(interface: index, name: name, type: AvahiNames.undotted(type), domain: "local")
    }

    private func serviceIndex(_ key: ServiceKey, in group: AvahiObject) -> Int? {
        group.services.firstIndex {
            $0.name == key.name && $0.type.lowercased() == key.type.lowercased() && $0.interface == key.interface
        }
    }

    private func addService(_ arguments: inout DBusArguments, to group: AvahiObject) throws(AvahiError) {
        let key = try readKey(&arguments)
        let host = try arguments.string()
        let port = try arguments.uint16()
        guard let txt = AvahiNames.txtRData(try arguments.byteArrays()) else { throw .invalidArgument }
        guard group.state == .uncommitted || group.state == .collision else { throw .badState }
        guard serviceIndex(key, in: group) == nil else { throw .collision }
        guard group.services.count < objectsPerClient else { throw .tooManyObjects }
        group.services.append(
            AvahiObject.GroupService(
                interface: key.interface, name: key.name, type: key.type, domain: key.domain, host: host, port: port,
                txt: txt))
    }

    private func addSubtype(_ arguments: inout DBusArguments, to group: AvahiObject) throws(AvahiError) {
        let key = try readKey(&arguments)
        let subtype = try arguments.string()
        guard group.state == .uncommitted || group.state == .collision else { throw .badState }
        guard let index = serviceIndex(key, in: group) else { throw .invalidObject }
        guard let label = AvahiNames.subtypeLabel(subtype, of: key.type) else { throw .invalidServiceSubtype }
        group.services[index].subtypes.append(label)
    }

    private func updateTXT(_ arguments: inout DBusArguments, in group: AvahiObject) throws(AvahiError) {
        let key = try readKey(&arguments)
        guard let txt = AvahiNames.txtRData(try arguments.byteArrays()) else { throw .invalidArgument }
        guard let index = serviceIndex(key, in: group) else { throw .invalidObject }
        group.services[index].txt = txt
        if let context = group.services[index].context {
            let status = submit(.updateRecord(UpdateRecordRequest(rdata: txt)), context: context, for: group)
            guard status == .noError else { throw AvahiError(status) }
        }
    }

    private func commit(_ group: AvahiObject) throws(AvahiError) {
        guard group.state == .uncommitted || group.state == .collision else { throw .badState }
        guard !group.services.isEmpty || !group.records.isEmpty else { throw .isEmpty }
        for index in group.services.indices {
            let service = group.services[index]
            let regtype = ([service.type] + service.subtypes).joined(separator: ",")
            let request = RegisterServiceRequest(
                flags: .noAutoRename, interfaceIndex: service.interface, name: service.name, regtype: regtype,
                domain: "local.", host: service.host, port: service.port, txt: service.txt)
            let context = makeContext()
            let status = submit(.registerService(request), context: context, for: group)
            guard status == .noError else {
                // The call fails, and the group fails too: Avahi's tools (avahi-publish) do not look at what
                // Commit returns, only at the group's state.
                objectOfContext[context] = nil
                withdraw(group)
                setState(group, .failure, error: AvahiError(status))
                throw AvahiError(status)
            }
            group.services[index].context = context
            group.services[index].registered = false
        }
        for index in group.records.indices {
            let context = makeContext()
            let status = submit(.registerRecord(group.records[index].request), context: context, for: group)
            guard status == .noError else {
                objectOfContext[context] = nil
                withdraw(group)
                setState(group, .failure, error: AvahiError(status))
                throw AvahiError(status)
            }
            group.records[index].context = context
            group.records[index].registered = false
        }
        setState(group, .registering)
    }

    /// Ends the group's registrations (goodbyes for those published).
    func withdraw(_ group: AvahiObject) {
        for index in group.services.indices {
            if let context = group.services[index].context { cancel(context, of: group) }
            group.services[index].context = nil
            group.services[index].registered = false
        }
        for index in group.records.indices {
            if let context = group.records[index].context { cancel(context, of: group) }
            group.records[index].context = nil
            group.records[index].registered = false
        }
        group.parked = false
    }

    func setState(_ group: AvahiObject, _ state: AvahiEntryGroupState, error: AvahiError? = nil) {
        group.state = state
        signal(group, "StateChanged", [.int32(state.rawValue), .string(error?.name ?? Self.success)])
    }

    /// A reply of one of the group's registrations, of a service or of a record.
    func entryGroupReply(_ error: DNSServiceError, context: ClientContext, group: AvahiObject, initial: Bool) {
        let service = group.services.firstIndex { $0.context == context }
        let record = group.records.firstIndex { $0.context == context }
        guard service != nil || record != nil else { return }
        switch error {
        case .noError:
            group.parked = false
            if let service { group.services[service].registered = true }
            if let record { group.records[record].registered = true }
            if group.state == .registering && group.services.allSatisfy(\.registered)
                && group.records.allSatisfy(\.registered)
            {
                setState(group, .established)
            }
        case .noAuth where initial:
            // Parked until an operator decides: the group stays registering.
            group.parked = true
        case .nameConflict:
            // As with Avahi, a collision empties the group: the client adds its services again under new names
            // (avahi-publish asserts that the group is empty before it does).
            withdraw(group)
            group.services.removeAll()
            group.records.removeAll()
            setState(group, .collision, error: .collision)
        default:
            withdraw(group)
            setState(group, .failure, error: AvahiError(error))
        }
    }

    /// The interface, flags and name that `AddAddress` and `AddRecord` begin with.
    private func readRecordKey(_ arguments: inout DBusArguments) throws(AvahiError)
        -> (interface: UInt32, flags: AvahiPublishFlags, name: DNSName)
    {
        let interface = try arguments.int32()
        let proto = try arguments.int32()
        let flags = AvahiPublishFlags(rawValue: try arguments.uint32())
        let text = try arguments.string()
        guard let index = AvahiInterface.dnssdIndex(interface) else { throw .invalidInterface }
        guard AvahiProtocol(rawValue: proto) != nil else { throw .invalidProtocol }
        guard AvahiPublishFlags.known.isSuperset(of: flags) else { throw .invalidFlags }
        guard !flags.contains(.useWideArea) else { throw .notSupported }
        guard let name = try? DNSName(text.hasSuffix(".") ? text : text + "."), name.isMulticastDNSName else {
            throw .invalidHostName
        }
        return (index, flags, name)
    }

    private func addRecordRequest(
        _ group: AvahiObject, interface: UInt32, unique: Bool, name: DNSName, type: RecordType, data: [UInt8],
        ttl: UInt32
    ) {
        let request = RegisterRecordRequest(
            recordIndex: makeRecordIndex(), flags: unique ? .unique : .shared, interfaceIndex: interface,
            fullname: name.description, rrtype: type.rawValue, rdata: data, ttl: ttl)
        group.records.append(AvahiObject.GroupRecord(request: request))
    }

    /// `AddAddress`: the name's A or AAAA record and, unless `NO_REVERSE`, the address's reverse-mapping PTR
    /// record, both unique, as Avahi publishes them.
    private func addAddress(_ arguments: inout DBusArguments, to group: AvahiObject) throws(AvahiError) {
        let key = try readRecordKey(&arguments)
        let text = try arguments.string()
        guard group.state == .uncommitted || group.state == .collision else { throw .badState }
        let type: RecordType
        let data: [UInt8]
        let reverse: DNSName
        if let address = IPv4Address(text) {
            (type, data, reverse) = (.a, RecordData.a(address).uncompressedBytes, address.reverseName)
        } else if let address = IPv6Address(text) {
            (type, data, reverse) = (.aaaa, RecordData.aaaa(address).uncompressedBytes, address.reverseName)
        } else {
            throw .invalidAddress
        }
        addRecordRequest(
            group, interface: key.interface, unique: true, name: key.name, type: type, data: data, ttl: 120)
        if !key.flags.contains(.noReverse) {
            addRecordRequest(
                group, interface: key.interface, unique: true, name: reverse, type: .ptr,
                data: RecordData.ptr(key.name).uncompressedBytes, ttl: 120)
        }
    }

    /// `AddRecord`: any record, unique when `UNIQUE` is given, else shared.
    private func addRecord(_ arguments: inout DBusArguments, to group: AvahiObject) throws(AvahiError) {
        let key = try readRecordKey(&arguments)
        let recordClass = try arguments.uint16()
        let type = try arguments.uint16()
        let ttl = try arguments.uint32()
        let data = try arguments.bytes()
        guard group.state == .uncommitted || group.state == .collision else { throw .badState }
        guard recordClass == 1 else { throw .invalidArgument }
        guard (try? RecordData.decode(type: RecordType(type), uncompressed: data)) != nil else { throw .invalidRecord }
        addRecordRequest(
            group, interface: key.interface, unique: key.flags.contains(.unique), name: key.name,
            type: RecordType(type), data: data, ttl: ttl)
    }
}
