#if canImport(Glibc)
import Glibc
#endif
import HeraldBroker
import HeraldEngine
import HeraldIPC
import HeraldWire

/// Turning requests into operations: validation, the access decision, and the status reply.
extension AppSocketServer {
    func handle(_ frame: IPCFrame, from client: AppClient) {
        let decoded: DecodedRequest
        do {
            decoded = try DecodedRequest.decode(header: frame.header, body: frame.body, connection: client.connectionState)
        } catch {
            let unserved: String? = switch error {
            case .unknownOperation(let code): "operation \(code) is not part of the protocol Herald speaks"
            case .unsupportedRequest(let operation): "Herald does not implement \(operation) (operation \(operation.rawValue))"
            default: nil
            }
            if let unserved {
                // An operation this daemon does not know or does not implement (NAT port mapping, Apple's private
                // ones): Unsupported, as mDNSResponder's clients expect, and the connection stays usable. On a
                // shared connection the status goes where the client waits for it: the error socket that came
                // with the frame.
                let route: StatusReturn = client.connectionState == .established && !client.passedDescriptors.isEmpty
                    && !frame.header.flags.contains(.noErrorSocket) ? .passedSocket : .inBand
                client.connectionState = .established
                noteRefusal(.unsupported, of: "operation \(frame.header.operation)", reason: unserved, by: client)
                reportStatus(.unsupported, via: route, context: frame.header.context, to: client)
                return
            }
            disconnect(client, reason: "malformed \(frame.header.requestOperation.map { "\($0)" } ?? "request"): \(error)")
            return
        }
        let context = decoded.header.context
        client.lastActive = MonotonicClock.milliseconds()
        // An explanation answers the request just before the question; any other request makes it stale.
        if case .getProperty = decoded.request {} else { explain(nil, to: client) }
        let wasNew = client.connectionState == .new
        client.connectionState = .established
        handlingRequest = true
        refusals.reason = nil
        refusals.parked = nil
        let status = perform(decoded.request, context: context, client: client, wasNew: wasNew)
        handlingRequest = false
        if let status, status != .noError {
            noteRefusal(status, of: decoded.request.summary, reason: refusals.reason ?? status.meaning, by: client)
        } else if let parked = refusals.parked {
            noteRefusal(.noAuth, of: decoded.request.summary, reason: "held until an operator decides: \(parked)",
                        by: client)
        }
        guard !client.closed else {
            flushReplies()
            return
        }
        reportStatus(status, via: decoded.statusReturn, context: context, to: client)
        flushReplies()
    }

    /// Sends a request's status where the protocol says it goes (docs/app-socket.md, "Where a request's status
    /// goes"): in band on the first request, on the passed error socket for requests on a shared connection.
    private func reportStatus(_ status: DNSServiceError?, via route: StatusReturn, context: ClientContext, to client: AppClient) {
        guard let status else { return }
        switch route {
        case .inBand:
            // Straight to the client: replies queued before the status stay queued and follow it.
            send(StatusWord.encode(status), to: client)
        case .passedSocket:
            // The status goes on another socket: replies the operation produced at once are sent first, so that a
            // client reading the status finds them already waiting on the connection (a parked operation's NoAuth).
            flushReplies()
            guard !client.passedDescriptors.isEmpty else {
                disconnect(client, reason: "a shared-connection request came without its error socket")
                return
            }
            let descriptor = client.passedDescriptors.removeFirst()
            let bytes = StatusWord.encode(status)
            _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            close(descriptor)
        case .namedSocket(let path):
            flushReplies()
            // The daemon connects for the client: only to a socket of the client's own user (any, for root), and
            // never blocking, since a listener that does not accept must not hold the daemon.
            guard let identity = client.identity else { return }
            do {
                let descriptor = try UnixSocket.connectChecked(to: path, owner: identity.uid == 0 ? nil : identity.uid)
                let bytes = StatusWord.encode(status)
                _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
                close(descriptor)
            } catch {
                logger.notice("app socket: client \(client.id): status not sent to its error socket: \(error)")
            }
        case .asyncErrorReply:
            if status != .noError { queue(.asyncError(AsyncErrorReply(error: status)), to: client, context: context) }
        case .none:
            break
        }
    }

    /// Carries out one request; returns the status to report (nil: the request has no status reply).
    private func perform(_ request: Request, context: ClientContext, client: AppClient, wasNew: Bool) -> DNSServiceError? {
        switch request {
        case .connection:
            return .noError
        case .cancel:
            cancel(context, of: client)
            return nil
        case .getProperty(let property):
            let answer: GetPropertyReply
            switch property.name {
            case "DaemonVersion":
                answer = .daemonVersion(Self.daemonVersion)
            case IPCConstants.permissionExplanationProperty:
                let text = client.lastExplanation ?? client.process.flatMap { explanations.explanation(for: $0) } ?? ""
                answer = GetPropertyReply(status: .noError, value: Array(text.utf8.prefix(4096)))
            default:
                answer = .unknownProperty
            }
            send(answer.encoded, to: client)
            return nil
        case .enumeration(let enumeration):
            let flags: DNSServiceFlags = [.add, .default]
            queue(.enumeration(EnumerationReply(flags: flags, interfaceIndex: enumeration.interfaceIndex, domain: "local.")),
                  to: client, context: context)
            return .noError
        case .setDomain:
            return .noError
        case .reconfirm(let request):
            return reconfirm(request, client: client)
        case .browse(let browse):
            return startBrowse(browse, context: context, client: client)
        case .resolve(let resolve):
            return startResolve(resolve, context: context, client: client)
        case .registerService(let register):
            return startRegistration(register, context: context, client: client)
        case .query(let query):
            return startQuery(query, context: context, client: client)
        case .addrInfo(let lookup):
            return startAddressLookup(lookup, context: context, client: client)
        case .updateRecord(let update):
            return updateRecord(update, context: context, client: client)
        case .registerRecord(let request):
            return registerRecord(request, context: context, client: client)
        case .addRecord(let request):
            return addRecord(request, context: context, client: client)
        case .removeRecord(let request):
            return removeRecord(request, context: context, client: client)
        }
    }

    // MARK: - Starting operations

    private func startBrowse(_ request: BrowseRequest, context: ClientContext, client: AppClient) -> DNSServiceError {
        if let refused = unservedInterface(request.interfaceIndex) { return refused }
        guard isLocal(request.domain) else { return notLocal(request.domain) }
        let interface = interfaceFilter(request.interfaceIndex)
        if let name = try? DNSName(request.regtype.hasSuffix(".") ? request.regtype + "local." : request.regtype + ".local."),
           ServiceType.isServiceEnumeration(name) {
            // Service type enumeration (RFC 6763 §9): browse results name the types found.
            let id = makeOperationID()
            return begin(AppOperation(kind: .browseServiceTypes, context: context, engineOperations: [id], start: { engine, now in
                engine.browse(id, type: name, interfaceIndex: interface, at: now)
            }), gated: .browseAllTypes, client: client)
        }
        let type: ServiceType
        switch Self.parseBrowseType(request.regtype) {
        case .success(let parsed): type = parsed
        case .failure(let why): return refuse(.badParam, why.text)
        }
        guard Self.isLocal(type) else { return notLocal(type.domain.description) }
        return begin(AppOperation(browsing: BrowseGroup.Key(type: type, interface: interface), context: context),
                     gated: .browse(type), client: client)
    }

    /// The type a browse asks for: `_http._tcp`, `_printer._sub._http._tcp`, or the dnssd API's
    /// `_http._tcp,_printer` (one subtype after a comma, as `DNSServiceBrowse` takes it); or why it is refused.
    static func parseBrowseType(_ regtype: String) -> Result<ServiceType, RefusalText> {
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
            return .failure(RefusalText("a browse takes one type and at most one subtype after a comma, as "
                                        + "'_http._tcp,_printer'"))
        }
    }

    private func startResolve(_ request: ResolveRequest, context: ClientContext, client: AppClient) -> DNSServiceError {
        if let refused = unservedInterface(request.interfaceIndex) { return refused }
        guard isLocal(request.domain) else {
            return refuse(.badParam, "the domain \(RefusalLog.shown(request.domain)) is not local.: Herald serves "
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
        return begin(AppOperation(kind: .resolve(instance: instance), context: context, engineOperations: [id], start: { engine, now in
            engine.resolve(id, instance: instance.fullName, interfaceIndex: interface, at: now)
        }), gated: .resolve(instance), client: client)
    }

    private func startRegistration(_ request: RegisterServiceRequest, context: ClientContext, client: AppClient) -> DNSServiceError {
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
        return begin(AppOperation(kind: .register(type: type, name: instance), context: context, engineOperations: [id], start: { engine, now in
            engine.register(id, registration, at: now)
        }), gated: .register(type), client: client)
    }

    private func startQuery(_ request: QueryRecordRequest, context: ClientContext, client: AppClient) -> DNSServiceError {
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
        guard name.hasSuffix("local.") || name.hasSuffix("in-addr.arpa.") || name.hasSuffix("ip6.arpa.") else {
            return refuse(.unsupported, "\(name) is not in local. or a reverse domain: Herald does no unicast DNS")
        }
        let type = RecordType(request.rrtype)
        let interface = interfaceFilter(request.interfaceIndex)
        // kDNSServiceFlagsReturnIntermediates: a peer's "no such record" (NSEC) is reported as NoSuchRecord.
        let negativeAnswers = request.flags.contains(.returnIntermediates)
        let id = makeOperationID()
        let operation = AppOperation(kind: .query(name: name, type: type, recordClass: request.rrclass), context: context,
                                     engineOperations: [id], start: { engine, now in
            engine.query(id, name: name, type: type, interfaceIndex: interface, reportingNegativeAnswers: negativeAnswers,
                         at: now)
        })
        operation.reportsNegativeAnswers = negativeAnswers
        let status = begin(operation, gated: Self.gatedQuery(name: name, type: type), client: client)
        if status == .noError, request.flags.contains(.timeout) {
            scheduleTimeout(of: operation, client: client, types: [type.rawValue])
        }
        return status
    }

    /// What asking for the records `name`/`type` amounts to for the permission rules.
    static func gatedQuery(name: DNSName, type: RecordType) -> GatedRequest {
        if ServiceType.isServiceEnumeration(name) {
            return type == .ptr ? .browseAllTypes : .query(name: name, type: type)
        } else if (type == .a || type == .aaaa) && name.labelCount == 2 {
            return .addressLookup(name)
        } else if let instance = try? ServiceInstanceName(fullName: name) {
            return .resolve(instance)
        } else if let serviceType = try? ServiceType(fullName: name), type == .ptr {
            return .browse(serviceType)
        }
        return .query(name: name, type: type)
    }

    /// DNSServiceReconfirmRecord: the record is asked for again and flushed from the cache unless its owner answers
    /// (RFC 6762 §10.4). Asking the network about a name is a query, allowed as one; there is nothing to wait for,
    /// so a request that is not allowed at once is refused (NoAuth).
    private func reconfirm(_ request: ReconfirmRequest, client: AppClient) -> DNSServiceError {
        if let refused = unservedInterface(request.interfaceIndex) { return refused }
        let type = RecordType(request.rrtype)
        guard let name = try? DNSName(request.fullname), RecordClass(request.rrclass) == .internet,
              let data = try? RecordData.decode(type: type, uncompressed: request.rdata) else {
            return refuse(.badParam, "the record is not a class IN record of a valid name with well-formed data")
        }
        guard name.hasSuffix("local.") || name.hasSuffix("in-addr.arpa.") || name.hasSuffix("ip6.arpa.") else {
            return refuse(.unsupported, "\(name) is not in local. or a reverse domain: Herald does no unicast DNS")
        }
        let gated = Self.gatedQuery(name: name, type: type)
        let caller = self.caller(of: client)
        let decision = gate.decide(gated, for: caller, isNew: true)
        explain(decision.explanation, to: client)
        switch decision {
        case .allow:
            break
        case .refuse(let reason, _), .park(let reason, _):
            return refuse(.noAuth, reason)
        }
        let record = ResourceRecord(name: name, type: type, ttl: 0, data: data)
        let interface = interfaceFilter(request.interfaceIndex)
        network.perform { engine, now in engine.reconfirm(record, interfaceIndex: interface, at: now) }
        return .noError
    }

    private func startAddressLookup(_ request: AddrInfoRequest, context: ClientContext, client: AppClient) -> DNSServiceError {
        if let refused = unservedInterface(request.interfaceIndex) { return refused }
        let text = request.hostname.hasSuffix(".") ? request.hostname : request.hostname + "."
        let name: DNSName
        do {
            name = try DNSName(text)
        } catch {
            return refuse(.badParam, "\(RefusalLog.shown(request.hostname)) is not a host name: \(error)")
        }
        // A name outside .local. would need unicast DNS, which Herald does not do (as for record queries).
        guard name.hasSuffix("local.") else {
            return refuse(.unsupported, "\(name) is not in local.: Herald does no unicast DNS")
        }
        var types: [RecordType] = []
        let wanted = request.protocol.intersection([.ipv4, .ipv6])
        if wanted.isEmpty || wanted.contains(.ipv4) { types.append(.a) }
        if wanted.isEmpty || wanted.contains(.ipv6) { types.append(.aaaa) }
        let ids = types.map { _ in makeOperationID() }
        let interface = interfaceFilter(request.interfaceIndex)
        let negativeAnswers = request.flags.contains(.returnIntermediates)
        let operation = AppOperation(kind: .addressLookup(hostname: request.hostname), context: context,
                                     engineOperations: ids, start: { engine, now in
            for (id, type) in zip(ids, types) {
                engine.query(id, name: name, type: type, interfaceIndex: interface,
                             reportingNegativeAnswers: negativeAnswers, at: now)
            }
        })
        operation.reportsNegativeAnswers = negativeAnswers
        let status = begin(operation, gated: .addressLookup(name), client: client)
        if status == .noError, request.flags.contains(.timeout) {
            scheduleTimeout(of: operation, client: client, types: types.map(\.rawValue))
        }
        return status
    }

    /// Asks the gate, then starts, parks or refuses the operation (docs/permissions.md, "Deciding", rules 2–5).
    func begin(_ operation: AppOperation, gated: GatedRequest, client: AppClient) -> DNSServiceError {
        guard client.operations[operation.context] == nil else {
            return refuse(.badParam, "the client context is already in use by another operation of the connection")
        }
        guard client.operations.count < limits.operationsPerClient else {
            return refuse(.noMemory, "the client reached the limit of \(limits.operationsPerClient) operations")
        }
        let caller = self.caller(of: client)
        if !gate.isOperator(caller), operationCount(of: client.user) >= limits.operationsPerUser {
            return refuse(.noMemory, "uid \(client.user) reached its share of \(limits.operationsPerUser) operations")
        }
        operation.gated = gated
        operation.caller = caller
        let decision = gate.decide(gated, for: caller, isNew: true)
        explain(decision.explanation, to: client)
        switch decision {
        case .refuse(let reason, _):
            // A refusal that only a new manifest can change. The status says NoAuth, and so does a reply, as for a
            // parked request: Apple's client library turns a NoAuth status into success (an app learns of NoAuth
            // from its callback), so without the reply its programs would wait for ever.
            queueParkedReply(for: operation, to: client)
            return refuse(.noAuth, reason)
        case .park(let reason, _):
            refusals.parked = reason
            operation.parked = true
            client.operations[operation.context] = operation
            queueParkedReply(for: operation, to: client)
            return .noError
        case .allow:
            client.operations[operation.context] = operation
            run(operation, of: client)
            return .noError
        }
    }

    func cancel(_ context: ClientContext, of client: AppClient) {
        guard let operation = client.operations.removeValue(forKey: context) else { return }
        halt([operation])
    }

    /// Records why the request being handled was refused or parked (nil: it was not), for the connection and for its
    /// process, which may ask on a connection of its own.
    func explain(_ explanation: String?, to client: AppClient) {
        client.lastExplanation = explanation
        if let process = client.process { explanations.record(explanation, for: process) }
    }

    /// The caller of the request being handled: the process that sent it (see ``CallerInspector``). Why it does
    /// not pass as the connection's app, when it does not, is logged once per connection.
    func caller(of client: AppClient) -> CallerIdentity {
        guard let peer = client.identity else { return CallerIdentity(pid: nil, uid: UInt32.max) }
        let connection = client.programEnded == nil ? client.connection : nil
        let (caller, note) = gate.caller(of: peer, connection: connection, sender: client.sender)
        if let note, !client.notedCaller {
            client.notedCaller = true
            logger.notice("app socket: client \(client.id): judged as no app: \(note)")
        }
        return caller
    }

    /// True when a service type's own domain is `local.`: a type such as `_x._tcp.corp.` is not served (Herald
    /// does multicast DNS only), whatever domain the request's domain field names.
    static func isLocal(_ type: ServiceType) -> Bool {
        type.domain.lowercased == ServiceType.defaultDomain
    }

    private func isLocal(_ domain: String) -> Bool {
        domain.isEmpty || domain.lowercased() == "local" || domain.lowercased() == "local."
    }

    /// Unsupported, for a domain other than `local.`.
    private func notLocal(_ domain: String) -> DNSServiceError {
        refuse(.unsupported, "the domain \(RefusalLog.shown(domain)) is not local.: Herald serves multicast DNS only")
    }

    /// Unsupported for the interface indexes Herald does not serve (``isUnservedInterface(_:)``), else nil.
    func unservedInterface(_ index: UInt32) -> DNSServiceError? {
        guard Self.isUnservedInterface(index) else { return nil }
        return refuse(.unsupported, index == DNSServiceInterfaceIndex.localOnly
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
    func noteRefusal(_ status: DNSServiceError, of request: String, reason: String, by client: AppClient) {
        if status != .noAuth { explain(RefusalLog.explanation(status, reason), to: client) }
        refusals.refused(clientID: client.id, pid: client.identity?.pid ?? -1, status: status, request: request,
                         reason: reason, now: MonotonicClock.milliseconds(), logger: logger)
    }

    /// An instance name cut to the 63 bytes of a label at a character (Unicode scalar) boundary, as mDNSResponder
    /// cuts a name given to `DNSServiceRegister` (`dns_sd.h`: longer names are truncated).
    static func truncatedInstance(_ name: String) -> String {
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
