import HeraldEngine
import HeraldIPC
import HeraldSession
import HeraldWire

/// Avahi 0.8's D-Bus API over the dnssd sessions (docs/dbus-api.md): each bus client is a connection of a
/// ``SessionCore`` of its own, each browser, resolver or entry group one or more of its operations. Calls come in
/// as values with the time; the method's answer, the signals for each object's owner, late answers, engine
/// commands and log lines go out as values. Parking, re-judging and the limits are the core's: what is here is the
/// Avahi protocol (object paths, flags, protocol numbers, signals, error names). No bus, clock or socket.
package final class AvahiFrontEnd {
    /// The sessions, with their own engine operation IDs.
    package let core: SessionCore
    let host: any AvahiHostFacts
    /// Objects one client may hold at once (Avahi's `objects-per-client-max` default).
    package var objectsPerClient = 1024

    /// One bus client, by its unique name.
    final class Client {
        let name: String
        let id: ConnectionID
        var objects: [String: AvahiObject] = [:]
        var nextObject = 1
        init(name: String, id: ConnectionID) {
            self.name = name
            self.id = id
        }
    }

    var clients: [String: Client] = [:]
    var objects: [String: AvahiObject] = [:]
    var objectOfContext: [ClientContext: AvahiObject] = [:]
    private var nextConnection = 1
    private var nextContext: UInt64 = 1
    private var nextRecordIndex: UInt32 = 1
    var signals: [AvahiSignal] = []
    var deferredReplies: [AvahiDeferredReply] = []
    var logLines: [SessionLogLine] = []
    /// Host names operators asked for, with the client that asked, in order.
    var hostLabelRequests: [(label: String, client: String)] = []
    /// Signals due at a time: `AllForNow`, `CacheExhausted`, a resolver's timeout.
    var deadlines: [(due: Int64, path: String, event: TimedEvent)] = []
    var now: Int64 = 0

    enum TimedEvent: Equatable { case cacheExhausted, allForNow, resolveTimeout }

    /// How long a browser waits before `AllForNow`, and a resolver before failing with a timeout (milliseconds).
    package static let allForNowDelay: Int64 = 1000
    package static let resolveTimeout: Int64 = 5000

    package static let versionString = "avahi 0.8"
    package static let apiVersion: UInt32 = 0x0203
    static let success = "org.freedesktop.Avahi.Success"

    package init(core: SessionCore, host: any AvahiHostFacts) {
        self.core = core
        self.host = host
    }

    // MARK: - Clients

    /// True once `sender` is a client (its first call was admitted).
    package func isClient(_ sender: String) -> Bool { clients[sender] != nil }

    /// The connection of a client in the sessions.
    package func connection(of sender: String) -> ConnectionID? { clients[sender]?.id }

    /// Admits a bus client before its first call, within the sessions' limits; nil when refused.
    package func admit(_ sender: String, user: UInt32, pid: Int32?, startTime: UInt64?, isOperator: Bool)
        -> ConnectionID?
    {
        if let client = clients[sender] { return client.id }
        let id = ConnectionID(nextConnection)
        guard core.open(id, user: user, pid: pid, startTime: startTime, isOperator: isOperator) else {
            takeCoreLog()
            return nil
        }
        nextConnection += 1
        clients[sender] = Client(name: sender, id: id)
        return id
    }

    /// A client left the bus: its objects go, and what they published says goodbye.
    package func clientGone(_ sender: String) {
        guard let client = clients.removeValue(forKey: sender) else { return }
        for object in client.objects.values { forget(object) }
        deadlines.removeAll { entry in client.objects[entry.path] != nil }
        core.close(client.id)
        takeCoreLog()
    }

    /// A client's process exited or started another program while its bus connection stayed: its operations end
    /// as on the app socket (browsers and resolvers fail with NotPermitted, entry groups with their services
    /// withdrawn), and it serves as no app from now on.
    package func endProgram(of sender: String, reason: String) {
        guard let client = clients[sender] else { return }
        core.endProgram(of: client.id, reason: reason)
        processReplies(initial: false)
    }

    /// True while a client has objects whose operations run or wait in the sessions.
    package func hasOperations(_ sender: String) -> Bool {
        clients[sender].map { core.hasOperations($0.id) } ?? false
    }

    /// The host's name changed (a conflict on the network, or an operator's `SetHostName`): the server says it is registering and then running
    /// again, as Avahi's does, so that clients that put the host's name in their services' names rename them.
    /// Herald keeps their registrations meanwhile.
    package func hostRenamed() {
        for state in [AvahiServerState.registering, .running] {
            signals.append(
                AvahiSignal(
                    destination: "", path: "/", interface: AvahiInterfaceSpec.serverName, member: "StateChanged",
                    arguments: [.int32(state.rawValue), .string(Self.success)]))
        }
    }

    /// The clients on the bus.
    package var clientCount: Int { clients.count }
    /// The objects of all clients.
    package var objectCount: Int { objects.count }

    // MARK: - Outputs

    package func takeSignals() -> [AvahiSignal] {
        defer { signals.removeAll() }
        return signals
    }

    package func takeDeferredReplies() -> [AvahiDeferredReply] {
        defer { deferredReplies.removeAll() }
        return deferredReplies
    }

    package func takeEngineCommands() -> [EngineCommand] { core.takeEngineCommands() }

    /// The host names operators asked for since the last call (`SetHostName`), with the client that asked: the
    /// daemon gives the engine the last one, and the server's `StateChanged` follows (``hostRenamed()``).
    package func takeHostLabelRequests() -> [(label: String, client: String)] {
        defer { hostLabelRequests.removeAll() }
        return hostLabelRequests
    }

    package func takeLog() -> [SessionLogLine] {
        takeCoreLog()
        defer { logLines.removeAll() }
        return logLines
    }

    private func takeCoreLog() { logLines += core.takeLog() }

    /// True while engine commands, signals or late answers wait to be taken.
    package var hasOutput: Bool { core.hasOutput || !signals.isEmpty || !deferredReplies.isEmpty }

    // MARK: - Time and events

    /// When ``advance(to:)`` next has work.
    package var nextDeadline: Int64? {
        [deadlines.map(\.due).min(), core.nextDeadline].compactMap { $0 }.min()
    }

    package func advance(to now: Int64) {
        self.now = now
        core.advance(to: now)
        let due = deadlines.filter { $0.due <= now }
        deadlines.removeAll { $0.due <= now }
        for entry in due {
            guard let object = objects[entry.path], !object.failed else { continue }
            switch entry.event {
            case .cacheExhausted: signal(object, "CacheExhausted", [])
            case .allForNow: signal(object, "AllForNow", [])
            case .resolveTimeout:
                if !object.found { fail(object, .timeout) }
            }
        }
        processReplies(initial: false)
    }

    /// An event of one of the sessions' engine operations.
    package func receive(_ event: OperationEvent, for operation: OperationID) { core.receive(event, for: operation) }

    /// Turns what the sessions queued into signals (after an engine step, or a change of decisions).
    package func flush() { processReplies(initial: false) }

    /// Decisions changed (a grant, a deny, a reset): parked operations start, refused ones end.
    package func accessChanged() {
        core.accessChanged()
        processReplies(initial: false)
    }

    // MARK: - Calls

    /// Handles one method call of an admitted client at `now`; `token` names it for a late answer.
    package func handle(_ call: AvahiCall, token: Int, at now: Int64) -> AvahiCallResult {
        self.now = now
        guard let client = clients[call.sender] else { return .error(.failure) }
        let result: AvahiCallResult
        do throws(AvahiError) {
            result = try dispatch(call, client: client, token: token)
        } catch {
            result = .error(error)
        }
        processReplies(initial: true)
        return result
    }

    private func dispatch(_ call: AvahiCall, client: Client, token: Int) throws(AvahiError) -> AvahiCallResult {
        if call.member == "Introspect"
            && (call.interface.isEmpty || call.interface == AvahiInterfaceSpec.introspectableName)
        {
            try DBusArguments(call.arguments).end()
            return .reply([.string(introspection(of: call.path, client: client))])
        }
        if call.path == "/" {
            let specs = [AvahiInterfaceSpec.server, .server2]
            guard
                let spec = specs.first(where: { call.interface.isEmpty || $0.name == call.interface }),
                let method = spec.method(call.member)
                    ?? (call.interface.isEmpty ? AvahiInterfaceSpec.server2.method(call.member) : nil)
            else { throw .unknownMethod(call.member, call.interface) }
            guard DBusValue.signature(of: call.arguments) == method.inputSignature else { throw .invalidArguments }
            return try serverCall(call.member, DBusArguments(call.arguments), client: client, token: token)
        }
        guard let object = objects[call.path] else {
            throw AvahiError(
                name: "org.freedesktop.DBus.Error.UnknownObject", message: "No such object \(call.path)")
        }
        guard object.owner === client, object.pendingCall == nil else { throw .accessDenied }
        guard call.interface.isEmpty || call.interface == object.interfaceName,
            let method = object.spec.method(call.member)
        else { throw .unknownMethod(call.member, call.interface) }
        guard DBusValue.signature(of: call.arguments) == method.inputSignature else { throw .invalidArguments }
        var arguments = DBusArguments(call.arguments)
        switch call.member {
        case "Free":
            forget(object)
            return .reply([])
        case "Start":
            guard !object.started else { throw .badState }
            try start(object)
            return .reply([])
        default:
            return try entryGroupCall(call.member, &arguments, group: object)
        }
    }

    private func introspection(of path: String, client: Client) -> String {
        if path == "/" {
            return AvahiInterfaceSpec.introspection(of: [.server, .server2])
        }
        if let object = objects[path], object.owner === client, object.pendingCall == nil {
            return AvahiInterfaceSpec.introspection(of: [object.spec])
        }
        return AvahiInterfaceSpec.introspection(of: [])
    }

    // MARK: - Server

    private func serverCall(_ member: String, _ arguments: DBusArguments, client: Client, token: Int)
        throws(AvahiError) -> AvahiCallResult
    {
        var arguments = arguments
        switch member {
        case "GetVersionString": return .reply([.string(Self.versionString)])
        case "GetAPIVersion": return .reply([.uint32(Self.apiVersion)])
        case "GetHostName": return .reply([.string(host.hostLabel)])
        case "GetHostNameFqdn": return .reply([.string(host.hostLabel + ".local")])
        case "GetDomainName": return .reply([.string("local")])
        case "IsNSSSupportAvailable": return .reply([.boolean(host.nssSupportAvailable)])
        case "GetState": return .reply([.int32(AvahiServerState.running.rawValue)])
        case "GetLocalServiceCookie": return .reply([.uint32(host.localServiceCookie)])
        case "GetAlternativeHostName":
            return .reply([.string(AvahiNames.alternativeHostName(try arguments.string()))])
        case "GetAlternativeServiceName":
            return .reply([.string(AvahiNames.alternativeServiceName(try arguments.string()))])
        case "GetNetworkInterfaceNameByIndex":
            guard let name = host.interfaceName(ofIndex: try arguments.int32()) else { throw .invalidInterface }
            return .reply([.string(name)])
        case "GetNetworkInterfaceIndexByName":
            guard let index = host.interfaceIndex(ofName: try arguments.string()) else { throw .invalidInterface }
            return .reply([.int32(index)])
        case "SetHostName":
            // Naming the host is an operator's act (root or the operator group), as Avahi's bus policy lets only
            // root do it; the change lasts until heraldd restarts.
            let label = try arguments.string()
            guard core.isOperator(client.id) else { throw .notPermitted }
            guard AvahiNames.isValidHostLabel(label) else { throw .invalidHostName }
            guard label.lowercased() != host.hostLabel.lowercased() else { throw .noChange }
            hostLabelRequests.append((label, client.name))
            return .reply([])
        case "EntryGroupNew":
            let group = try makeObject(.entryGroup, "EntryGroup", client: client, interface: -1, protocol: -1)
            group.started = true
            return .reply([.objectPath(group.path)])
        case "ServiceBrowserNew", "ServiceBrowserPrepare":
            let browser = try makeServiceBrowser(&arguments, client: client)
            if member.hasSuffix("New") { try startOrDrop(browser) }
            return .reply([.objectPath(browser.path)])
        case "ServiceTypeBrowserNew", "ServiceTypeBrowserPrepare":
            let browser = try makeServiceTypeBrowser(&arguments, client: client)
            if member.hasSuffix("New") { try startOrDrop(browser) }
            return .reply([.objectPath(browser.path)])
        case "ServiceResolverNew", "ServiceResolverPrepare":
            let resolver = try makeServiceResolver(&arguments, client: client, hidden: false)
            if member.hasSuffix("New") { try startOrDrop(resolver) }
            return .reply([.objectPath(resolver.path)])
        case "ResolveService":
            let resolver = try makeServiceResolver(&arguments, client: client, hidden: true)
            resolver.pendingCall = token
            try startOrDrop(resolver)
            return .later
        case "HostNameResolverNew", "HostNameResolverPrepare":
            let resolver = try makeHostNameResolver(&arguments, client: client)
            if member.hasSuffix("New") { try startOrDrop(resolver) }
            return .reply([.objectPath(resolver.path)])
        case "ResolveHostName":
            let resolver = try makeHostNameResolver(&arguments, client: client)
            resolver.pendingCall = token
            try startOrDrop(resolver)
            return .later
        case "AddressResolverNew", "AddressResolverPrepare":
            let resolver = try makeAddressResolver(&arguments, client: client)
            if member.hasSuffix("New") { try startOrDrop(resolver) }
            return .reply([.objectPath(resolver.path)])
        case "ResolveAddress":
            let resolver = try makeAddressResolver(&arguments, client: client)
            resolver.pendingCall = token
            try startOrDrop(resolver)
            return .later
        case "RecordBrowserNew", "RecordBrowserPrepare":
            let browser = try makeRecordBrowser(&arguments, client: client)
            if member.hasSuffix("New") { try startOrDrop(browser) }
            return .reply([.objectPath(browser.path)])
        case "DomainBrowserNew", "DomainBrowserPrepare":
            let browser = try makeDomainBrowser(&arguments, client: client)
            if member.hasSuffix("New") { try startOrDrop(browser) }
            return .reply([.objectPath(browser.path)])
        default:
            throw .unknownMethod(member, AvahiInterfaceSpec.serverName)
        }
    }

    // MARK: - Objects

    func makeObject(
        _ kind: AvahiObject.Kind, _ label: String, client: Client, interface: Int32, protocol number: Int32
    ) throws(AvahiError) -> AvahiObject {
        guard interface >= -1 else { throw .invalidInterface }
        guard let proto = AvahiProtocol(rawValue: number) else { throw .invalidProtocol }
        guard client.objects.count < objectsPerClient else { throw .tooManyObjects }
        let clientNumber = client.id.rawValue
        let path = "/Client\(clientNumber)/\(label)\(client.nextObject)"
        client.nextObject += 1
        let object = AvahiObject(kind: kind, path: path, owner: client, interface: interface, protocol: proto)
        client.objects[path] = object
        objects[path] = object
        return object
    }

    func dnssdInterface(_ interface: Int32) throws(AvahiError) -> UInt32 {
        guard let index = AvahiInterface.dnssdIndex(interface) else { throw .invalidInterface }
        return index
    }

    static func lookupFlags(_ raw: UInt32) throws(AvahiError) -> AvahiLookupFlags {
        let flags = AvahiLookupFlags(rawValue: raw)
        guard AvahiLookupFlags.known.isSuperset(of: flags) else { throw .invalidFlags }
        // Herald serves multicast DNS only.
        guard !flags.contains(.useWideArea) else { throw .notSupported }
        return flags
    }

    static func checkDomain(_ domain: String) throws(AvahiError) {
        let lowered = AvahiNames.undotted(domain).lowercased()
        guard lowered.isEmpty || lowered == "local" else { throw .notSupported }
    }

    private func makeServiceBrowser(_ arguments: inout DBusArguments, client: Client) throws(AvahiError)
        -> AvahiObject
    {
        let interface = try arguments.int32()
        let proto = try arguments.int32()
        let type = try arguments.string()
        let domain = try arguments.string()
        _ = try Self.lookupFlags(try arguments.uint32())
        try Self.checkDomain(domain)
        let index = try dnssdInterface(interface)
        guard case .success = SessionCore.parseBrowseType(type) else { throw .invalidServiceType }
        let browser = try makeObject(
            .serviceBrowser, "ServiceBrowser", client: client, interface: interface, protocol: proto)
        browser.request = .browse(BrowseRequest(interfaceIndex: index, regtype: type, domain: "local."))
        return browser
    }

    private func makeServiceTypeBrowser(_ arguments: inout DBusArguments, client: Client) throws(AvahiError)
        -> AvahiObject
    {
        let interface = try arguments.int32()
        let proto = try arguments.int32()
        let domain = try arguments.string()
        _ = try Self.lookupFlags(try arguments.uint32())
        try Self.checkDomain(domain)
        let index = try dnssdInterface(interface)
        let browser = try makeObject(
            .serviceTypeBrowser, "ServiceTypeBrowser", client: client, interface: interface, protocol: proto)
        browser.request = .browse(
            BrowseRequest(interfaceIndex: index, regtype: "_services._dns-sd._udp", domain: "local."))
        return browser
    }

    private func makeServiceResolver(_ arguments: inout DBusArguments, client: Client, hidden: Bool)
        throws(AvahiError) -> AvahiObject
    {
        let interface = try arguments.int32()
        let proto = try arguments.int32()
        let name = try arguments.string()
        let type = try arguments.string()
        let domain = try arguments.string()
        let aprotocol = try arguments.int32()
        _ = try Self.lookupFlags(try arguments.uint32())
        try Self.checkDomain(domain)
        let index = try dnssdInterface(interface)
        guard let addressProtocol = AvahiProtocol(rawValue: aprotocol) else { throw .invalidProtocol }
        guard !name.isEmpty, name.utf8.count <= 63 else { throw .invalidServiceName }
        guard (try? ServiceType(type)) != nil else { throw .invalidServiceType }
        let resolver = try makeObject(
            .serviceResolver, hidden ? "ServiceResolveCall" : "ServiceResolver", client: client, interface: interface,
            protocol: proto)
        resolver.name = name
        resolver.type = AvahiNames.undotted(type)
        resolver.domain = "local"
        resolver.addressProtocol = addressProtocol
        resolver.request = .resolve(ResolveRequest(interfaceIndex: index, name: name, regtype: type, domain: "local."))
        return resolver
    }

    private func makeHostNameResolver(_ arguments: inout DBusArguments, client: Client) throws(AvahiError)
        -> AvahiObject
    {
        let interface = try arguments.int32()
        let proto = try arguments.int32()
        let name = try arguments.string()
        let aprotocol = try arguments.int32()
        _ = try Self.lookupFlags(try arguments.uint32())
        let index = try dnssdInterface(interface)
        guard let addressProtocol = AvahiProtocol(rawValue: aprotocol) else { throw .invalidProtocol }
        guard let parsed = try? DNSName(name.hasSuffix(".") ? name : name + "."), parsed.labels.count >= 2 else {
            throw .invalidHostName
        }
        let resolver = try makeObject(
            .hostNameResolver, "HostNameResolver", client: client, interface: interface, protocol: proto)
        resolver.name = AvahiNames.undotted(name)
        resolver.addressProtocol = addressProtocol
        resolver.request = .addrInfo(
            AddrInfoRequest(interfaceIndex: index, protocol: addressProtocol.dnssdProtocols, hostname: name))
        return resolver
    }

    /// Starts an object made by a `…New` call; one the sessions refuse is not kept.
    private func startOrDrop(_ object: AvahiObject) throws(AvahiError) {
        do {
            try start(object)
        } catch {
            forget(object)
            throw error
        }
    }

    /// Starts a browser's or resolver's operation in the sessions.
    func start(_ object: AvahiObject) throws(AvahiError) {
        object.started = true
        guard let request = object.request else { return }
        let context = makeContext()
        let status = submit(request, context: context, for: object)
        guard status == .noError else {
            objectOfContext[context] = nil
            throw object.kind == .serviceBrowser && status == .badParam ? .invalidServiceType : AvahiError(status)
        }
        object.context = context
        switch object.kind {
        case .serviceBrowser, .serviceTypeBrowser, .recordBrowser, .domainBrowser:
            schedule(.cacheExhausted, for: object, after: 0)
            schedule(.allForNow, for: object, after: Self.allForNowDelay)
        case .serviceResolver, .hostNameResolver, .addressResolver:
            schedule(.resolveTimeout, for: object, after: Self.resolveTimeout)
        case .entryGroup:
            break
        }
    }

    func schedule(_ event: TimedEvent, for object: AvahiObject, after delay: Int64) {
        deadlines.append((now + delay, object.path, event))
    }

    /// A record index no other record of the sessions had (`DNSServiceRegisterRecord`'s, per connection).
    func makeRecordIndex() -> UInt32 {
        defer { nextRecordIndex &+= 1 }
        return nextRecordIndex
    }

    func makeContext() -> ClientContext {
        defer { nextContext += 1 }
        return ClientContext(rawValue: nextContext)
    }

    /// Hands one request of `object` to the sessions, as a dnssd client would send it; returns its status.
    @discardableResult
    func submit(_ request: Request, context: ClientContext, for object: AvahiObject) -> DNSServiceError {
        objectOfContext[context] = object
        let header = IPCHeader(dataLength: 0, operation: request.operation.rawValue, context: context)
        let decoded = DecodedRequest(header: header, request: request, statusReturn: .inBand)
        switch core.handle(decoded, on: object.owner.id, at: now) {
        case .status(let status, _): return status
        case .property, .nothing: return .noError
        }
    }

    /// Ends one operation of `object` in the sessions.
    func cancel(_ context: ClientContext, of object: AvahiObject) {
        objectOfContext[context] = nil
        let header = IPCHeader(dataLength: 0, operation: RequestOperation.cancel.rawValue, context: context)
        _ = core.handle(
            DecodedRequest(header: header, request: .cancel(CancelRequest()), statusReturn: .none), on: object.owner.id,
            at: now)
    }

    /// Takes an object away: its operations end (an entry group's services say goodbye).
    func forget(_ object: AvahiObject) {
        for context in object.contexts { cancel(context, of: object) }
        object.context = nil
        object.lookupContext = nil
        for index in object.services.indices { object.services[index].context = nil }
        object.failed = true
        objects[object.path] = nil
        object.owner.objects[object.path] = nil
    }

    /// Queues a signal of `object` for its owner.
    func signal(_ object: AvahiObject, _ member: String, _ arguments: [DBusValue]) {
        guard object.pendingCall == nil else { return }
        signals.append(
            AvahiSignal(
                destination: object.owner.name, path: object.path, interface: object.interfaceName, member: member,
                arguments: arguments))
    }

    /// A browser or resolver fails: `Failure` with the error's name (a waiting call gets the error), and its
    /// operations end.
    func fail(_ object: AvahiObject, _ error: AvahiError) {
        guard !object.failed else { return }
        if let call = object.pendingCall {
            deferredReplies.append(AvahiDeferredReply(call: call, result: .error(error)))
            forget(object)
            return
        }
        signal(object, "Failure", [.string(error.name)])
        for context in object.contexts { cancel(context, of: object) }
        object.context = nil
        object.lookupContext = nil
        object.failed = true
    }
}
