import HeraldBroker
import HeraldEngine
import HeraldIPC
import HeraldWire

/// Turning requests into operations: validation, the access decision, and the status reply.
extension SessionCore {
    /// Handles one decoded request of `connection` at `now`: starts, parks or refuses operations, queues replies
    /// and engine commands, and says what the front end must write itself (the status word, or a property).
    package func handle(_ decoded: DecodedRequest, on connection: ConnectionID, at now: Int64) -> RequestOutcome {
        self.now = now
        guard let session = sessions[connection] else { return .nothing }
        let context = decoded.header.context
        // An explanation answers the request just before the question; any other request makes it stale.
        if case .getProperty = decoded.request {} else { explain(nil, to: session) }
        refusals.reason = nil
        refusals.parked = nil
        let result = perform(decoded.request, context: context, session: session)
        let status: DNSServiceError?
        switch result {
        case .status(let value): status = value
        case .property(let answer): return .property(answer)
        case .none: status = nil
        }
        if let status, status != .noError {
            noteRefusal(
                status, of: decoded.request.summary, reason: refusals.reason ?? status.meaning, on: connection,
                at: now)
        } else if let parked = refusals.parked {
            noteRefusal(
                .noAuth, of: decoded.request.summary, reason: "held until an operator decides: \(parked)",
                on: connection, at: now)
        }
        guard let status else { return .nothing }
        switch decoded.statusReturn {
        case .inBand, .passedSocket, .namedSocket:
            return .status(status, route: decoded.statusReturn)
        case .asyncErrorReply:
            if status != .noError {
                queue(.asyncError(AsyncErrorReply(error: status)), to: connection, context: context)
            }
            return .nothing
        case .none:
            return .nothing
        }
    }

    /// What one request produced: a status, a property, or nothing to write.
    enum Performed {
        case status(DNSServiceError)
        case property(GetPropertyReply)
        case none
    }

    /// Carries out one request.
    private func perform(_ request: Request, context: ClientContext, session: Session) -> Performed {
        let status: DNSServiceError
        switch request {
        case .connection:
            status = .noError
        case .cancel:
            cancel(context, of: session)
            return .none
        case .getProperty(let property):
            let answer: GetPropertyReply
            switch property.name {
            case "DaemonVersion":
                answer = .daemonVersion(Self.daemonVersion)
            case IPCConstants.permissionExplanationProperty:
                let text =
                    session.lastExplanation ?? session.process.flatMap { explanations.explanation(for: $0) } ?? ""
                answer = GetPropertyReply(status: .noError, value: Array(text.utf8.prefix(4096)))
            default:
                answer = .unknownProperty
            }
            return .property(answer)
        case .enumeration(let enumeration):
            let flags: DNSServiceFlags = [.add, .default]
            queue(
                .enumeration(
                    EnumerationReply(flags: flags, interfaceIndex: enumeration.interfaceIndex, domain: "local.")),
                to: session.id, context: context)
            status = .noError
        case .setDomain:
            status = .noError
        case .reconfirm(let request):
            status = reconfirm(request, session: session)
        case .browse(let browse):
            status = startBrowse(browse, context: context, session: session)
        case .resolve(let resolve):
            status = startResolve(resolve, context: context, session: session)
        case .registerService(let register):
            status = startRegistration(register, context: context, session: session)
        case .query(let query):
            status = startQuery(query, context: context, session: session)
        case .addrInfo(let lookup):
            status = startAddressLookup(lookup, context: context, session: session)
        case .updateRecord(let update):
            status = updateRecord(update, context: context, session: session)
        case .registerRecord(let request):
            status = registerRecord(request, context: context, session: session)
        case .addRecord(let request):
            status = addRecord(request, context: context, session: session)
        case .removeRecord(let request):
            status = removeRecord(request, context: context, session: session)
        }
        return .status(status)
    }

    // MARK: - Starting operations

    private func startBrowse(_ request: BrowseRequest, context: ClientContext, session: Session) -> DNSServiceError {
        if let refused = unservedInterface(request.interfaceIndex) { return refused }
        guard isLocal(request.domain) else { return notLocal(request.domain) }
        let interface = interfaceFilter(request.interfaceIndex)
        if let name = try? DNSName(
            request.regtype.hasSuffix(".") ? request.regtype + "local." : request.regtype + ".local."),
            ServiceType.isServiceEnumeration(name)
        {
            // Service type enumeration (RFC 6763 §9): browse results name the types found.
            let id = makeOperationID()
            return begin(
                SessionOperation(
                    kind: .browseServiceTypes, context: context, engineOperations: [id],
                    start: [.browse(id, type: name, interface: interface)]),
                gated: .browseAllTypes, session: session)
        }
        let type: ServiceType
        switch Self.parseBrowseType(request.regtype) {
        case .success(let parsed): type = parsed
        case .failure(let why): return refuse(.badParam, why.text)
        }
        guard Self.isLocal(type) else { return notLocal(type.domain.description) }
        return begin(
            SessionOperation(browsing: BrowseGroup.Key(type: type, interface: interface), context: context),
            gated: .browse(type), session: session)
    }

    /// The type a browse asks for: `_http._tcp`, `_printer._sub._http._tcp`, or the dnssd API's
    /// `_http._tcp,_printer` (one subtype after a comma, as `DNSServiceBrowse` takes it); or why it is refused.
    package static func parseBrowseType(_ regtype: String) -> Result<ServiceType, RefusalText> {
        let parts = regtype.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let base: ServiceType
        do {
            base = try ServiceType(parts[0])
        } catch {
            return .failure(RefusalText(error.description))
        }
        switch parts.count {
        case 1: return .success(base)
        case 2 where !base.hasSubtype && !parts[1].isEmpty:
            do {
                return .success(try base.withSubtype(parts[1]))
            } catch {
                return .failure(RefusalText(error.description))
            }
        default:
            return .failure(
                RefusalText(
                    "a browse takes one type and at most one subtype after a comma, as "
                        + "'_http._tcp,_printer'"))
        }
    }

    private func startResolve(_ request: ResolveRequest, context: ClientContext, session: Session) -> DNSServiceError {
        if let refused = unservedInterface(request.interfaceIndex) { return refused }
        guard isLocal(request.domain) else {
            return refuse(
                .badParam,
                "the domain \(RefusalLog.shown(request.domain)) is not local.: Herald serves "
                    + "multicast DNS only")
        }
        let instance: ServiceInstanceName
        do {
            let type = try ServiceType(request.regtype)
            guard Self.isLocal(type) else { return notLocal(type.domain.description) }
            instance = try ServiceInstanceName(instance: request.name, type: type.baseType)
        } catch {
            return refuse(.badParam, error.description)
        }
        let interface = interfaceFilter(request.interfaceIndex)
        let id = makeOperationID()
        return begin(
            SessionOperation(
                kind: .resolve(instance: instance), context: context, engineOperations: [id],
                start: [.resolve(id, instance: instance.fullName, interface: interface)]),
            gated: .resolve(instance), session: session)
    }

    private func startRegistration(_ request: RegisterServiceRequest, context: ClientContext, session: Session)
        -> DNSServiceError
    {
        if let refused = unservedInterface(request.interfaceIndex) { return refused }
        guard isLocal(request.domain) else { return notLocal(request.domain) }
        // The dnssd API lists subtypes after the type, separated by commas: `_http._tcp,_printer`.
        let parts = request.regtype.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        let type: ServiceType
        do {
            type = try ServiceType(parts[0])
        } catch {
            return refuse(.badParam, error.description)
        }
        guard Self.isLocal(type) else { return notLocal(type.domain.description) }
        guard !type.hasSubtype else {
            return refuse(.badParam, "register the plain type and give subtypes after commas, as '_http._tcp,_printer'")
        }
        let subtypes = parts.dropFirst().map { $0 }
        if let bad = subtypes.first(where: { $0.isEmpty || $0.utf8.count > 63 }) {
            return refuse(.badParam, "subtype \(RefusalLog.shown(bad)) is not 1 to 63 bytes (RFC 6763 §7.1)")
        }
        // dns_sd.h: a name too long for a label is truncated, as mDNSResponder does (at a character boundary)
        // unless the client asked for no automatic renaming.
        var instance = request.name
        if !request.flags.contains(.noAutoRename) { instance = Self.truncatedInstance(instance) }
        if !instance.isEmpty {
            do {
                try ServiceInstanceName.validate(instance: instance)
            } catch {
                return refuse(.badParam, error.description)
            }
        }
        let txt: TXTRecord
        if request.txt.isEmpty {
            txt = .empty
        } else {
            do {
                txt = try TXTRecord(rdata: request.txt)
            } catch {
                return refuse(.badParam, "the TXT record data is malformed: \(error)")
            }
        }
        guard fitsInOneMessage(txt.rdata.count, ofServiceType: type) else {
            return refuse(.badParam, "the TXT record (\(txt.rdata.count) bytes) does not fit in one message")
        }
        var host: DNSName?
        if !request.host.isEmpty {
            do {
                host = try DNSName(request.host)
            } catch {
                return refuse(.badParam, "the host \(RefusalLog.shown(request.host)) is not a name: \(error)")
            }
        }
        let registration = ServiceRegistration(
            instance: instance, type: type.fullName, subtypes: subtypes, host: host, port: request.port, txt: txt,
            autoRename: !request.flags.contains(.noAutoRename), interfaceIndex: interfaceFilter(request.interfaceIndex))
        let id = makeOperationID()
        return begin(
            SessionOperation(
                kind: .register(type: type, name: instance), context: context, engineOperations: [id],
                start: [.register(id, registration)]),
            gated: .register(type), session: session)
    }

    private func startQuery(_ request: QueryRecordRequest, context: ClientContext, session: Session) -> DNSServiceError
    {
        if let refused = unservedInterface(request.interfaceIndex) { return refused }
        // Multicast DNS has records of class IN only (kDNSServiceClass_IN); a question may also ask for ANY class.
        let recordClass = RecordClass(request.rrclass)
        guard recordClass == .internet || recordClass == .any else {
            return refuse(.badParam, "class \(request.rrclass): multicast DNS has class IN (1) only")
        }
        let name: DNSName
        do {
            name = try DNSName(request.name)
        } catch {
            return refuse(.badParam, "\(RefusalLog.shown(request.name)) is not a name: \(error)")
        }
        // Only multicast DNS names are served here: `.local.`, and reverse names, which Herald has no unicast DNS
        // to ask about (hosts publish reverse PTRs for all their addresses, RFC 6762 §4).
        guard name.isMulticastDNSName else {
            return refuse(.unsupported, "\(name) is not in local. or a reverse domain: Herald does no unicast DNS")
        }
        let type = RecordType(request.rrtype)
        let interface = interfaceFilter(request.interfaceIndex)
        // kDNSServiceFlagsReturnIntermediates: a peer's "no such record" (NSEC) is reported as NoSuchRecord.
        let negativeAnswers = request.flags.contains(.returnIntermediates)
        let id = makeOperationID()
        let operation = SessionOperation(
            kind: .query(name: name, type: type, recordClass: request.rrclass), context: context,
            engineOperations: [id],
            start: [
                .query(
                    id, name: name, type: type, interface: interface,
                    negativeAnswers: negativeAnswers)
            ])
        operation.reportsNegativeAnswers = negativeAnswers
        let status = begin(operation, gated: PermissionRequest.forQuery(name: name, type: type), session: session)
        if status == .noError, request.flags.contains(.timeout) {
            timeouts.add(operation, of: session.id, types: [type.rawValue], now: now)
        }
        return status
    }

    /// DNSServiceReconfirmRecord: the record is asked for again and flushed from the cache unless its owner answers
    /// (RFC 6762 §10.4). Asking the network about a name is a query, allowed as one; there is nothing to wait for,
    /// so a request that is not allowed at once is refused (NoAuth).
    private func reconfirm(_ request: ReconfirmRequest, session: Session) -> DNSServiceError {
        if let refused = unservedInterface(request.interfaceIndex) { return refused }
        let type = RecordType(request.rrtype)
        guard let name = try? DNSName(request.fullname), RecordClass(request.rrclass) == .internet,
            let data = try? RecordData.decode(type: type, uncompressed: request.rdata)
        else {
            return refuse(.badParam, "the record is not a class IN record of a valid name with well-formed data")
        }
        guard name.isMulticastDNSName else {
            return refuse(.unsupported, "\(name) is not in local. or a reverse domain: Herald does no unicast DNS")
        }
        let gated = PermissionRequest.forQuery(name: name, type: type)
        let caller = gate.caller(of: session.id)
        let decision = gate.decide(gated, for: caller, isNew: true)
        explain(decision.explanation, to: session)
        switch decision {
        case .allow:
            break
        case .refuse(let reason, _), .park(let reason, _):
            return refuse(.noAuth, reason)
        }
        let record = ResourceRecord(name: name, type: type, ttl: 0, data: data)
        let interface = interfaceFilter(request.interfaceIndex)
        engineCommands.append(.reconfirm(record, interface: interface))
        return .noError
    }

    private func startAddressLookup(_ request: AddrInfoRequest, context: ClientContext, session: Session)
        -> DNSServiceError
    {
        if let refused = unservedInterface(request.interfaceIndex) { return refused }
        let text = request.hostname.hasSuffix(".") ? request.hostname : request.hostname + "."
        let name: DNSName
        do {
            name = try DNSName(text)
        } catch {
            return refuse(.badParam, "\(RefusalLog.shown(request.hostname)) is not a host name: \(error)")
        }
        // A name outside .local. would need unicast DNS, which Herald does not do (as for record queries).
        guard name.isInLocalDomain else {
            return refuse(.unsupported, "\(name) is not in local.: Herald does no unicast DNS")
        }
        var types: [RecordType] = []
        let wanted = request.protocol.intersection([.ipv4, .ipv6])
        if wanted.isEmpty || wanted.contains(.ipv4) { types.append(.a) }
        if wanted.isEmpty || wanted.contains(.ipv6) { types.append(.aaaa) }
        let ids = types.map { _ in makeOperationID() }
        let interface = interfaceFilter(request.interfaceIndex)
        let negativeAnswers = request.flags.contains(.returnIntermediates)
        let operation = SessionOperation(
            kind: .addressLookup(hostname: request.hostname), context: context,
            engineOperations: ids,
            start: zip(ids, types).map { id, type in
                .query(id, name: name, type: type, interface: interface, negativeAnswers: negativeAnswers)
            })
        operation.reportsNegativeAnswers = negativeAnswers
        // Judged as A and AAAA queries of the name are (both alike): an address lookup, or resolving a service's name.
        let status = begin(operation, gated: PermissionRequest.forQuery(name: name, type: .a), session: session)
        if status == .noError, request.flags.contains(.timeout) {
            timeouts.add(operation, of: session.id, types: types.map(\.rawValue), now: now)
        }
        return status
    }

    /// Asks the gate, then starts, parks or refuses the operation (docs/permissions.md, "Deciding", rules 2–5).
    func begin(_ operation: SessionOperation, gated: PermissionRequest, session: Session) -> DNSServiceError {
        guard session.operations[operation.context] == nil else {
            return refuse(.badParam, "the client context is already in use by another operation of the connection")
        }
        guard session.operations.count < limits.operationsPerConnection else {
            return refuse(.noMemory, "the client reached the limit of \(limits.operationsPerConnection) operations")
        }
        let caller = gate.caller(of: session.id)
        if !gate.isOperator(caller), operationCount(of: session.user) >= limits.operationsPerUser {
            return refuse(.noMemory, "uid \(session.user) reached its share of \(limits.operationsPerUser) operations")
        }
        operation.gated = gated
        operation.judgedCaller = session.share(caller)
        let decision = gate.decide(gated, for: caller, isNew: true)
        explain(decision.explanation, to: session)
        switch decision {
        case .refuse(let reason, _):
            // A refusal that only a new manifest can change. The status says NoAuth, and so does a reply, as for a
            // parked request: Apple's client library turns a NoAuth status into success (an app learns of NoAuth
            // from its callback), so without the reply its programs would wait for ever.
            queueParkedReply(for: operation, to: session.id)
            return refuse(.noAuth, reason)
        case .park(let reason, _):
            refusals.parked = reason
            operation.parked = true
            session.operations[operation.context] = operation
            queueParkedReply(for: operation, to: session.id)
            return .noError
        case .allow:
            session.operations[operation.context] = operation
            run(operation, of: session)
            return .noError
        }
    }

    func cancel(_ context: ClientContext, of session: Session) {
        guard let operation = session.operations.removeValue(forKey: context) else { return }
        halt([operation])
    }

    /// Records why the request being handled was refused or parked (nil: it was not), for the connection and for its
    /// process, which may ask on a connection of its own.
    func explain(_ explanation: String?, to session: Session) {
        session.lastExplanation = explanation
        if let process = session.process { explanations.record(explanation, for: process) }
    }

    /// True when a service type's own domain is `local.`: a type such as `_x._tcp.corp.` is not served (Herald
    /// does multicast DNS only), whatever domain the request's domain field names.
    static func isLocal(_ type: ServiceType) -> Bool {
        type.domain == DNSName.localDomain
    }

    /// True when a request's domain field names `local.` (with or without its final dot, in any case) or is empty.
    private func isLocal(_ domain: String) -> Bool {
        domain.isEmpty || (try? DNSName(domain)) == DNSName.localDomain
    }

    /// Unsupported, for a domain other than `local.`.
    private func notLocal(_ domain: String) -> DNSServiceError {
        refuse(.unsupported, "the domain \(RefusalLog.shown(domain)) is not local.: Herald serves multicast DNS only")
    }

    /// Unsupported for the interface indexes Herald does not serve (``isUnservedInterface(_:)``), else nil.
    func unservedInterface(_ index: UInt32) -> DNSServiceError? {
        guard Self.isUnservedInterface(index) else { return nil }
        return refuse(
            .unsupported,
            index == DNSServiceInterfaceIndex.localOnly
                ? "kDNSServiceInterfaceIndexLocalOnly: Herald has no host-only services"
                : "kDNSServiceInterfaceIndexUnicast: Herald does no unicast DNS")
    }

    /// Returns `status` and notes why the request being handled was refused, for the log line and the
    /// explanation (``RefusalLog``).
    func refuse(_ status: DNSServiceError, _ reason: String) -> DNSServiceError {
        refusals.reason = reason
        return status
    }

    /// Logs a refusal (once per client and reason, rate-limited); one that is not a permission decision (whose
    /// explanation the gate gave) is what the process is told when it asks why.
    package func noteRefusal(
        _ status: DNSServiceError, of request: String, reason: String, on connection: ConnectionID,
        at now: Int64
    ) {
        self.now = now
        guard let session = sessions[connection] else { return }
        if status != .noAuth { explain(RefusalLog.explanation(status, reason), to: session) }
        for line in refusals.refused(
            clientID: connection.rawValue, pid: session.pid ?? -1, status: status,
            request: request, reason: reason, now: now)
        {
            log(.notice, line)
        }
    }

    /// An instance name cut to the 63 bytes of a label at a character (Unicode scalar) boundary, as mDNSResponder
    /// cuts a name given to `DNSServiceRegister` (`dns_sd.h`: longer names are truncated).
    package static func truncatedInstance(_ name: String) -> String {
        guard name.utf8.count > ServiceInstanceName.maxInstanceLength else { return name }
        var kept = String.UnicodeScalarView()
        var length = 0
        for scalar in name.unicodeScalars {
            length += UTF8.width(scalar)
            if length > ServiceInstanceName.maxInstanceLength { break }
            kept.append(scalar)
        }
        return String(kept)
    }

    /// The dnssd interface index as an engine filter: 0 means every interface (as do the P2P and BLE indexes,
    /// whose interfaces Linux does not have).
    func interfaceFilter(_ index: UInt32) -> Int? { index == 0 || index >= 0xFFFF_FFF0 ? nil : Int(index) }

    /// `kDNSServiceInterfaceIndexLocalOnly` and `kDNSServiceInterfaceIndexUnicast`: services seen only on this host,
    /// and unicast DNS, neither of which Herald offers. Such requests are refused (Unsupported) rather than served
    /// on the network, where a "local only" service would be visible to every host.
    static func isUnservedInterface(_ index: UInt32) -> Bool {
        index == DNSServiceInterfaceIndex.localOnly || index == DNSServiceInterfaceIndex.unicast
    }
}
