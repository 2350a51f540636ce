import HeraldBroker
import HeraldEngine
import HeraldIPC
import HeraldWire

/// Turning engine events into dnssd replies, and access decisions that change while operations run.
extension SessionCore {
    /// An event of one of the sessions' engine operations (others are ignored).
    package func receive(_ event: OperationEvent, for id: OperationID) {
        if let group = groupOfOperation[id] {
            deliver(event, to: group)
            return
        }
        guard let (connection, operation) = owners[id], let session = sessions[connection], !operation.parked else {
            return
        }
        let context = operation.context
        switch (operation.kind, event) {
        case (.browseServiceTypes, .instanceAdded(let type, let link)),
            (.browseServiceTypes, .instanceRemoved(let type, let link)):
            let added = { if case .instanceAdded = event { return true } else { return false } }()
            guard let reply = Self.serviceTypeReply(type, interfaceIndex: link.interfaceIndex, added: added) else {
                return
            }
            let family = reportedFamily(of: link)
            let key = PresenceKey(interface: link.interfaceIndex, family: family, name: type)
            guard operation.presence.count(key, on: link, added: added) else { break }
            queue(.browse(reply), to: connection, context: context, family: family)

        case (.resolve(let instance), .resolved(let service)):
            let interface = service.link.interfaceIndex
            let family = reportedFamily(of: service.link)
            let reported = ReportedResolve(
                interface: interface, family: family, target: service.target, port: service.port, txt: service.txt)
            if let last = operation.lastResolved.firstIndex(where: { $0.interface == interface && $0.family == family })
            {
                // The same answer again, or from the other IP family of the interface.
                if operation.lastResolved[last].repeats(service) { break }
                operation.lastResolved[last] = reported
            } else {
                operation.lastResolved.append(reported)
            }
            let reply = ResolveReply(
                interfaceIndex: UInt32(interface), fullname: instance.fullName.dnssdFullName,
                hostTarget: service.target.dnssdFullName, port: service.port, txt: service.txt.rdata)
            queue(.resolve(reply), to: connection, context: context, family: family)

        case (.register(let type, let requested), .registered(let name)):
            let label = name.firstLabel.map { String(decoding: $0, as: UTF8.self) } ?? ""
            if !requested.isEmpty && label != requested {
                log(
                    .notice,
                    "app socket: client \(connection) registered \(name) (renamed from \"\(requested)\" after a name conflict)"
                )
            } else {
                log(.info, "app socket: client \(connection) registered \(name)")
            }
            queue(
                .registerService(
                    RegisterServiceReply(
                        flags: .add, name: label, regtype: type.dnssdRegtype,
                        domain: type.domain.description)), to: connection, context: context)

        case (.record(let name, _, _), .registered):
            log(.info, "app socket: client \(connection) registered a record at \(name)")
            queue(.registerRecord(RegisterRecordReply()), to: connection, context: context)

        case (.record(let name, _, let index), .registrationFailed):
            log(.notice, "app socket: client \(connection) lost its record at \(name) to a conflict")
            session.recordContexts[index] = nil
            queue(.registerRecord(RegisterRecordReply(error: .nameConflict)), to: connection, context: context)

        case (.register(let type, _), .registrationFailed):
            queue(
                .registerService(
                    RegisterServiceReply(
                        error: .nameConflict, regtype: type.dnssdRegtype,
                        domain: type.domain.description)), to: connection, context: context)

        case (.query(_, _, let recordClass), .recordAdded(let record, let link)),
            (.query(_, _, let recordClass), .recordRemoved(let record, let link)):
            let added = { if case .recordAdded = event { return true } else { return false } }()
            let rdata = record.data.uncompressedBytes
            let key = PresenceKey(
                interface: link.interfaceIndex, family: reportedFamily(of: link), name: record.name,
                type: record.type.rawValue, data: rdata)
            guard operation.presence.count(key, on: link, added: added) else { break }
            let reply = QueryRecordReply(
                flags: added ? .add : [], interfaceIndex: UInt32(link.interfaceIndex),
                fullname: record.name.dnssdFullName, rrtype: record.type.rawValue,
                rrclass: recordClass == 255 ? record.recordClass.rawValue : recordClass,
                rdata: rdata, ttl: record.ttl)
            showing(.query(reply), to: session.id, operation, record: record, on: link, added: added)

        case (.query, .negativeAnswerAdded(let key, let link, let ttl)),
            (.addressLookup, .negativeAnswerAdded(let key, let link, let ttl)):
            let presence = NegativeAnswerPresence.Key(interface: link.interfaceIndex, type: key.type.rawValue)
            guard let change = operation.negatives.negative(presence, added: true, ttl: ttl) else { break }
            queueNegative(change, type: key.type.rawValue, on: link, to: connection, operation)

        case (.query, .negativeAnswerRemoved(let key, let link)),
            (.addressLookup, .negativeAnswerRemoved(let key, let link)):
            let presence = NegativeAnswerPresence.Key(interface: link.interfaceIndex, type: key.type.rawValue)
            guard let change = operation.negatives.negative(presence, added: false) else { break }
            queueNegative(change, type: key.type.rawValue, on: link, to: connection, operation)

        case (.addressLookup(let hostname), .recordAdded(let record, let link)),
            (.addressLookup(let hostname), .recordRemoved(let record, let link)):
            guard record.type == .a || record.type == .aaaa else { break }
            let added = { if case .recordAdded = event { return true } else { return false } }()
            let rdata = record.data.uncompressedBytes
            let key = PresenceKey(interface: link.interfaceIndex, family: reportedFamily(of: link), data: rdata)
            guard operation.presence.count(key, on: link, added: added) else { break }
            let reply = AddrInfoReply(
                flags: added ? .add : [], interfaceIndex: UInt32(link.interfaceIndex),
                hostname: hostname, rrtype: record.type.rawValue, rrclass: 1, rdata: rdata,
                ttl: record.ttl)
            showing(.addrInfo(reply), to: session.id, operation, record: record, on: link, added: added)

        default:
            break
        }
    }

    /// Queues a record's reply; for an operation reporting negative answers, a NoSuchRecord the record ends goes
    /// before it, and one its removal begins after it (``NegativeAnswerPresence``).
    private func showing(
        _ reply: Reply, to connection: ConnectionID, _ operation: SessionOperation, record: ResourceRecord,
        on link: LinkID, added: Bool
    ) {
        let family = reportedFamily(of: link)
        guard operation.reportsNegativeAnswers else {
            return queue(reply, to: connection, context: operation.context, family: family)
        }
        let key = NegativeAnswerPresence.Key(interface: link.interfaceIndex, type: record.type.rawValue)
        let change = operation.negatives.record(key, added: added)
        let type = record.type.rawValue
        if added, let change { queueNegative(change, type: type, on: link, to: connection, operation) }
        queue(reply, to: connection, context: operation.context, family: family)
        if !added, let change { queueNegative(change, type: type, on: link, to: connection, operation) }
    }

    /// The NoSuchRecord reply that shows or hides a negative answer, as mDNSResponder sends it: the question's name
    /// and the type, no data; the Add flag and the NSEC's TTL when shown.
    private func queueNegative(
        _ change: NegativeAnswerPresence.Change, type: UInt16, on link: LinkID, to connection: ConnectionID,
        _ operation: SessionOperation
    ) {
        let (flags, ttl): (DNSServiceFlags, UInt32)
        switch change {
        case .shown(let shownTTL): (flags, ttl) = (.add, shownTTL)
        case .hidden: (flags, ttl) = ([], 0)
        }
        let interface = UInt32(link.interfaceIndex)
        switch operation.kind {
        case .query(let name, _, let recordClass):
            queue(
                .query(
                    QueryRecordReply(
                        flags: flags, interfaceIndex: interface, error: .noSuchRecord,
                        fullname: name.dnssdFullName, rrtype: type,
                        rrclass: recordClass == 255 ? 1 : recordClass, rdata: [], ttl: ttl)),
                to: connection, context: operation.context)
        case .addressLookup(let hostname):
            queue(
                .addrInfo(
                    AddrInfoReply(
                        flags: flags, interfaceIndex: interface, error: .noSuchRecord, hostname: hostname,
                        rrtype: type, rrclass: 1, rdata: [], ttl: ttl)),
                to: connection, context: operation.context)
        default:
            break
        }
    }

    /// An instance event of a group's engine operation: counted once for the group, and when it changes what the
    /// browses see, one reply queued for every member.
    private func deliver(_ event: OperationEvent, to group: BrowseGroup) {
        let instance: DNSName
        let link: LinkID
        let added: Bool
        switch event {
        case .instanceAdded(let name, let on): (instance, link, added) = (name, on, true)
        case .instanceRemoved(let name, let on): (instance, link, added) = (name, on, false)
        default: return
        }
        let family = reportedFamily(of: link)
        guard
            let reply = Self.browseReply(
                instance: instance, type: group.key.type, interfaceIndex: link.interfaceIndex,
                added: added),
            group.presence.count(
                PresenceKey(interface: link.interfaceIndex, family: family, name: instance), on: link, added: added)
        else { return }
        let recipients = group.members.lazy.map { (connection: $0.connection, context: $0.operation.context) }
        queue(.browse(reply), to: recipients, family: family)
    }

    /// The browse reply for an instance of `type`, or nil when the name is not an instance of the type, or not a
    /// name a client could resolve (RFC 6763 §4.1.1: UTF-8 without control characters; such a name could also
    /// carry terminal escape sequences to whoever prints it).
    package static func browseReply(instance: DNSName, type: ServiceType, interfaceIndex: Int, added: Bool)
        -> BrowseReply?
    {
        guard let label = instance.firstLabel, let parent = instance.parent, parent == type.baseTypeName,
            !label.isEmpty, !label.contains(where: Self.isControlByte),
            let name = String(validating: label, as: UTF8.self),
            // C1 controls too (U+0080–U+009F): U+009B is a terminal's CSI.
            !name.unicodeScalars.contains(where: { (0x80...0x9F).contains($0.value) })
        else { return nil }
        return BrowseReply(
            flags: added ? .add : [], interfaceIndex: UInt32(interfaceIndex),
            name: name, regtype: type.dnssdRegtype, domain: type.domain.description)
    }

    /// An ASCII control character (0x00–0x1F, 0x7F), which RFC 6763 §4.1.1 keeps out of instance names.
    package static func isControlByte(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x7F }

    /// A service type found by type enumeration, laid out as mDNSResponder reports it (its
    /// `DeconstructServiceName` of the PTR target): `_http._tcp.local.` becomes the instance `_http`, the
    /// type `_tcp.local.` and the root domain `.`. Names that are not service types are skipped.
    package static func serviceTypeReply(_ type: DNSName, interfaceIndex: Int, added: Bool) -> BrowseReply? {
        let labels = type.labels
        guard labels.count >= 2, labels[0].first == UInt8(ascii: "_"),
            !labels.contains(where: { $0.contains(where: isControlByte) }),
            let name = String(validating: labels[0], as: UTF8.self)
        else { return nil }
        let rest = labels[1...].map { DNSName.presentation(ofLabel: $0) }
        let typePart = rest.prefix(2).joined(separator: ".") + "."
        let domain = rest.count > 2 ? rest.dropFirst(2).joined(separator: ".") + "." : "."
        return BrowseReply(
            flags: added ? .add : [], interfaceIndex: UInt32(interfaceIndex), name: name,
            regtype: typePart, domain: domain)
    }

    /// The first reply of a parked operation: its error field carries NoAuth (docs/app-socket.md, "NoAuth on the
    /// app socket").
    func queueParkedReply(for operation: SessionOperation, to connection: ConnectionID) {
        let reply: Reply
        switch operation.kind {
        case .browse(let type):
            reply = .browse(BrowseReply(error: .noAuth, regtype: type.dnssdRegtype, domain: type.domain.description))
        case .browseServiceTypes:
            reply = .browse(BrowseReply(error: .noAuth, regtype: "_services._dns-sd._udp.", domain: "local."))
        case .resolve(let instance):
            reply = .resolve(ResolveReply(error: .noAuth, fullname: instance.fullName.dnssdFullName))
        case .register(let type, let name):
            reply = .registerService(
                RegisterServiceReply(
                    error: .noAuth, name: name, regtype: type.dnssdRegtype,
                    domain: type.domain.description))
        case .query(let name, let type, let recordClass):
            reply = .query(
                QueryRecordReply(
                    error: .noAuth, fullname: name.dnssdFullName, rrtype: type.rawValue, rrclass: recordClass))
        case .addressLookup(let hostname):
            // With an address type: Apple's client library calls back only for A and AAAA results, and drops others.
            reply = .addrInfo(
                AddrInfoReply(error: .noAuth, hostname: hostname, rrtype: RecordType.a.rawValue, rrclass: 1))
        case .record:
            reply = .registerRecord(RegisterRecordReply(error: .noAuth))
        }
        queue(reply, to: connection, context: operation.context)
    }

    /// Re-asks the gate for every operation (after a grant, a deny, a reset), each as the caller that started it,
    /// identified when it asked (so this reads nothing from `/proc`): parked operations that are now allowed start;
    /// running ones that are no longer allowed stop with NoAuth (and registrations say goodbye). The gate is asked
    /// once per distinct caller, with all of that caller's operations (``SessionGate/decideAgain(_:for:)``).
    package func accessChanged() {
        var judged:
            [(session: Session, operation: SessionOperation, request: PermissionRequest, caller: CallerIdentity)] = []
        for session in sessions.values.sorted(by: { $0.id < $1.id }) {
            for operation in session.operations.values.sorted(by: { $0.context.rawValue < $1.context.rawValue }) {
                guard let request = operation.gated, let caller = operation.caller else { continue }
                judged.append((session, operation, request, caller))
            }
        }
        // Each caller's operations, in the order its first one comes.
        var indexesByCaller: [CallerIdentity: [Int]] = [:]
        var callers: [CallerIdentity] = []
        for (index, entry) in judged.enumerated() {
            if indexesByCaller[entry.caller] == nil { callers.append(entry.caller) }
            indexesByCaller[entry.caller, default: []].append(index)
        }
        var decisions = [AccessDecision?](repeating: nil, count: judged.count)
        for caller in callers {
            let indexes = indexesByCaller[caller]!
            let answers = gate.decideAgain(indexes.map { judged[$0].request }, for: caller)
            // A gate that answers fewer than asked leaves the rest as they are.
            for (index, answer) in zip(indexes, answers) { decisions[index] = answer }
        }
        for (entry, decision) in zip(judged, decisions) {
            guard let decision else { continue }
            let (session, operation) = (entry.session, entry.operation)
            // An app told NoAuth asks why next (on a connection of its own).
            if let explanation = decision.explanation { explain(explanation, to: session) }
            switch (decision, operation.parked) {
            case (.allow, true):
                operation.parked = false
                run(operation, of: session)
            case (.refuse, false), (.park, false):
                halt([operation])
                operation.parked = true
                operation.presence.removeAll()
                operation.negatives.removeAll()
                operation.lastResolved.removeAll()
                queueParkedReply(for: operation, to: session.id)
            default:
                break
            }
        }
    }
}
