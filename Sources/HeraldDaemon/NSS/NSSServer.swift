import HeraldBroker
import HeraldEngine
import HeraldSession
import HeraldWire
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Limits that keep NSS clients from taking the daemon down.
package struct NSSLimits: Hashable, Sendable {
    /// Connections at once; more are answered "too many clients" and closed.
    package var clients = 256
    /// Connections of one user at once (operators are held only to ``clients``), so that no user can hold every
    /// connection and blind the others' name lookups.
    package var clientsPerUser = 32
    /// Distinct lookups running at once (each keeps querying the network for a few seconds); a new
    /// question past this is refused with "too many objects".
    package var lookups = 128
    /// How long a client may take to send its request line.
    package var requestMilliseconds: Int64 = 5000

    package init() {}
}

/// Serves `.local` host names and reverse lookups to libnss-mdns (and so to every program that resolves
/// names through NSS) on a Unix socket speaking Avahi's simple text protocol: one request line, one reply
/// line, then the connection closes. Answers come from the engine's cache at once; otherwise the engine
/// queries the network and the reply waits at most ``NSSTiming/missAfter``. Every lookup is judged as an app's
/// A/AAAA or PTR query of the name is (``NSSLookupKey/permissionRequest``): an address lookup, unless the name
/// is a service's; one that is not allowed is answered as not found.
package final class NSSServer {
    private let loop: EventLoop
    private let network: NetworkService
    private let gate: AccessGate
    private let timing: NSSTiming
    private let limits: NSSLimits
    private let logger: Logger
    private let listener: UnixListener
    package var path: String { listener.path }
    private var timer: LoopTimer!
    private var clients: [Int: NSSClient] = [:]
    private var nextClientID = 1
    private var lookups: [NSSLookupKey: NSSLookup] = [:]
    private var lookupOfOperation: [OperationID: NSSLookupKey] = [:]
    /// The IDs of the lookups' engine operations, tagged as NSS's.
    private var operationIDs = EngineOperationIDs(owner: .nss)

    /// Listens on `path`. Engine events of its own lookups come through the network's router.
    init(
        path: String, loop: EventLoop, network: NetworkService, gate: AccessGate, timing: NSSTiming = NSSTiming(),
        limits: NSSLimits = NSSLimits(), logger: Logger
    ) throws(SystemError) {
        self.loop = loop
        self.network = network
        self.gate = gate
        self.timing = timing
        self.limits = limits
        self.logger = logger
        listener = try UnixListener(path: path, loop: loop)
        timer = try LoopTimer(loop: loop) { [unowned self] in self.review() }
        listener.accepted = { [unowned self] connections in self.accept(connections) }
        network.router.register(self, for: .nss)
    }

    deinit {
        for client in clients.values { client.close() }
    }

    /// Connections open now.
    package var clientCount: Int { clients.count }
    /// Lookups running or kept now.
    package var lookupCount: Int { lookups.count }

    // MARK: - Connections

    private func accept(_ connections: [Int32]) {
        for fd in connections {
            let identity = ClientIdentity.ofPeer(fd)
            let client = NSSClient(
                id: nextClientID, fd: fd, identity: identity, connectedAt: MonotonicClock.milliseconds())
            nextClientID += 1
            let user = identity?.uid ?? UInt32.max
            let isOperator =
                identity.map { gate.isOperator(CallerIdentity(pid: $0.pid, uid: $0.uid, groups: [$0.gid])) }
                ?? false
            let ofUser = clients.values.reduce(0) { $0 + ($1.user == user ? 1 : 0) }
            guard
                loop.watch(
                    client, server: "nss", logger: logger, read: { [unowned self] in self.read(from: $0) },
                    write: { [unowned self] in self.writePending($0) })
            else { continue }
            clients[client.id] = client
            if clients.count > limits.clients {
                logger.warning("nss: refusing a client: the limit of \(limits.clients) clients is reached")
                reply(.failure(.tooManyClients), to: client)
            } else if !isOperator, ofUser >= limits.clientsPerUser {
                logger.warning(
                    "nss: refusing a client: uid \(user) has \(limits.clientsPerUser) connections, its share")
                reply(.failure(.tooManyClients), to: client)
            } else if let identity {
                // Identified before its request is judged; the request waits in the socket meanwhile.
                client.identifying = true
                gate.identifyConnection(identity) { [weak self, weak client] connection in
                    guard let self, let client, self.clients[client.id] != nil else { return }
                    client.connection = connection
                    client.identifying = false
                    self.read(from: client)
                }
            }
        }
        scheduleTimer()
    }

    private func read(from client: NSSClient) {
        guard !client.identifying else { return }
        guard case .reading = client.state else {
            // A request is being answered: anything more is ignored; the end of the connection ends it early.
            drain(client)
            return
        }
        switch UnixSocket.read(client.fd, maximum: 2048) {
        case .wouldBlock:
            return
        case .closed:
            if let line = client.reader.finish() {
                handle(line: line, from: client)
            } else {
                drop(client)
            }
        case .data(let bytes, let descriptors, let sender):
            for descriptor in descriptors { close(descriptor) }
            client.take(sender)
            switch client.reader.feed(bytes) {
            case .incomplete: break
            case .line(let line): handle(line: line, from: client)
            case .tooLong:
                logger.notice(
                    "nss: client \(client.id) (pid \(client.identity?.pid ?? -1)) sent a line that is too long")
                reply(.failure(.invalidOperation), to: client)
            }
        }
        scheduleTimer()
    }

    /// Reads and discards what a client sends after its request; closes it when it hangs up.
    private func drain(_ client: NSSClient) {
        for _ in 0..<16 {
            switch UnixSocket.read(client.fd, maximum: 2048) {
            case .wouldBlock: return
            case .closed:
                drop(client)
                return
            case .data(_, let descriptors, let sender):
                for descriptor in descriptors { close(descriptor) }
                if let pidfd = sender?.pidfd { close(pidfd) }
            }
        }
    }

    private func handle(line: [UInt8], from client: NSSClient) {
        let request: NSSRequest
        do {
            request = try NSSRequest(line: line)
        } catch {
            logger.debug("nss: client \(client.id): \(error)")
            reply(error.reply, to: client)
            return
        }
        switch request {
        case .help:
            reply(.help, to: client)
        case .browseDNSServers:
            reply(.failure(.notSupported), to: client)
        case .resolveHostName(let name, let families):
            resolve(.host(name), families: families, own: ownAddress(of: name, families: families), for: client)
        case .resolveAddress(let address):
            resolve(.reverse(address.reverseName), families: .any, own: ownName(for: address), for: client)
        }
    }

    // MARK: - Lookups

    /// Answers with `own` (this host's own name or address) or from a lookup on the network, once the gate allows it.
    private func resolve(_ key: NSSLookupKey, families: NSSAddressFamilies, own: NSSReply?, for client: NSSClient) {
        if case .host(let name) = key, !name.isInLocalDomain {
            logger.debug("nss: \(name) is not a .local name")
            return reply(.failure(.timeout), to: client)
        }
        guard permitted(key, client) else { return reply(.failure(.timeout), to: client) }
        if let own { return reply(own, to: client) }
        wait(for: key, families: families, client: client)
    }

    /// Joins the running lookup for `key`, or starts one, and replies as soon as it can.
    private func wait(for key: NSSLookupKey, families: NSSAddressFamilies, client: NSSClient) {
        let now = MonotonicClock.milliseconds()
        let lookup: NSSLookup
        if let existing = lookups[key] {
            lookup = existing
        } else {
            guard lookups.count < limits.lookups else {
                logger.warning("nss: not looking up \(key): \(limits.lookups) lookups are running")
                return reply(.failure(.tooManyObjects), to: client)
            }
            let types: [RecordType]
            switch key {
            case .host: types = [.a, .aaaa]
            case .reverse: types = [.ptr]
            }
            let operations = types.map { _ in makeOperationID() }
            lookup = NSSLookup(key: key, operations: operations, at: now)
            lookups[key] = lookup
            for operation in operations { lookupOfOperation[operation] = key }
            // Records the cache already holds are delivered while the queries start.
            network.perform { engine, time in
                for (operation, type) in zip(operations, types) {
                    // A host's NSEC saying it has no address of a family ends the wait for that family at once.
                    engine.query(operation, name: key.name, type: type, reportingNegativeAnswers: true, at: time)
                }
            }
        }
        lookup.lastUsed = now
        lookup.waiters.insert(client.id)
        client.state = .waiting(key, families)
        answerIfReady(client, lookup: lookup, at: now)
    }

    private func makeOperationID() -> OperationID {
        operationIDs.next()
    }

    /// Asks the access gate; anything but "allow" is answered as a miss (and logged with its reason).
    private func permitted(_ key: NSSLookupKey, _ client: NSSClient) -> Bool {
        guard let peer = client.identity else { return false }
        let caller = gate.caller(of: peer, connection: client.connection, sender: client.sender).caller
        let request = key.permissionRequest
        switch gate.decide(request, for: caller, isNew: true) {
        case .allow:
            return true
        case .refuse(let reason, _), .park(let reason, _):
            logger.info("nss: \(request) by pid \(caller.pid ?? -1) not permitted: \(reason)")
            return false
        }
    }

    private func deliver(_ event: OperationEvent, to key: NSSLookupKey) {
        guard let lookup = lookups[key] else { return }
        let now = MonotonicClock.milliseconds()
        lookup.apply(event, at: now)
        for id in lookup.waiters.sorted() {
            if let client = clients[id] { answerIfReady(client, lookup: lookup, at: now) }
        }
        scheduleTimer()
    }

    /// Replies to a waiting client when its lookup has an answer or its wait is over.
    private func answerIfReady(_ client: NSSClient, lookup: NSSLookup, at time: Int64) {
        guard case .waiting(let key, let families) = client.state else { return }
        switch key {
        case .host(let name):
            switch lookup.host.outcome(for: families, at: time, timing: timing) {
            case .answer(let found):
                reply(
                    .hostAddress(
                        interfaceIndex: found.interfaceIndex, protocol: found.linkFamily, name: name,
                        address: found.address), to: client)
            case .denied:
                logger.debug("nss: \(name) has no \(families) address: its owner says so (NSEC)")
                reply(.failure(.timeout), to: client)
            case .notFound:
                reply(.failure(.timeout), to: client)
            case .waitUntil(let deadline):
                client.deadline = deadline
                return
            }
        case .reverse:
            switch lookup.reverse.outcome(at: time, timing: timing) {
            case .answer(let found):
                reply(
                    .addressName(interfaceIndex: found.interfaceIndex, protocol: found.linkFamily, name: found.name),
                    to: client)
            case .notFound, .denied:
                reply(.failure(.timeout), to: client)
            case .waitUntil(let deadline):
                client.deadline = deadline
                return
            }
        }
        lookup.waiters.remove(client.id)
        lookup.lastUsed = time
    }

    /// Runs when the timer fires: answers waits that are over, closes clients that never asked anything,
    /// and ends lookups nobody has used for a while.
    private func review() {
        let now = MonotonicClock.milliseconds()
        for client in clients.values.sorted(by: { $0.id < $1.id }) {
            switch client.state {
            case .reading:
                if now - client.connectedAt >= limits.requestMilliseconds {
                    logger.debug("nss: client \(client.id) sent no request in time")
                    drop(client)
                }
            case .waiting(let key, _):
                if let lookup = lookups[key] { answerIfReady(client, lookup: lookup, at: now) } else { drop(client) }
            case .replying:
                if now - client.connectedAt >= limits.requestMilliseconds + timing.missAfter {
                    drop(client)  // it does not read its reply
                }
            }
        }
        let expired = lookups.values.filter { $0.waiters.isEmpty && now - $0.lastUsed >= timing.keepFinished }
        if !expired.isEmpty {
            let operations = expired.flatMap(\.operations)
            for lookup in expired { lookups[lookup.key] = nil }
            for operation in operations { lookupOfOperation[operation] = nil }
            network.perform { engine, time in
                for operation in operations { engine.cancel(operation, at: time) }
            }
        }
        scheduleTimer()
    }

    private func scheduleTimer() {
        var next: Int64?
        func consider(_ time: Int64) { next = min(next ?? time, time) }
        for client in clients.values {
            switch client.state {
            case .reading: consider(client.connectedAt + limits.requestMilliseconds)
            case .waiting: if let deadline = client.deadline { consider(deadline) }
            case .replying: consider(client.connectedAt + limits.requestMilliseconds + timing.missAfter)
            }
        }
        for lookup in lookups.values where lookup.waiters.isEmpty { consider(lookup.lastUsed + timing.keepFinished) }
        timer.schedule(at: next)
    }

    // MARK: - This host's own names

    /// This host's address for its own name, from the interfaces in use (when it publishes them).
    private func ownAddress(of name: DNSName, families: NSSAddressFamilies) -> NSSReply? {
        guard network.engine.configuration.publishAddresses, name == network.engine.hostName else { return nil }
        let candidates = network.interfaces.values.sorted { $0.index < $1.index }.flatMap { interface in
            interface.addresses.map {
                NSSFoundAddress(address: $0.address, interfaceIndex: interface.index, linkFamily: $0.address.family)
            }
        }.filter { families.accepts($0.address.family) }
        guard let best = NSSHostLookupProgress.best(candidates, for: families) else { return nil }
        return .hostAddress(
            interfaceIndex: best.interfaceIndex, protocol: best.linkFamily, name: name, address: best.address)
    }

    /// This host's name for one of its own addresses.
    private func ownName(for address: IPAddress) -> NSSReply? {
        guard network.engine.configuration.publishAddresses else { return nil }
        for interface in network.interfaces.values.sorted(by: { $0.index < $1.index })
        where interface.addresses.contains(where: { $0.address == address }) {
            return .addressName(
                interfaceIndex: interface.index, protocol: address.family, name: network.engine.hostName)
        }
        return nil
    }

    // MARK: - Replies

    /// Sends the one reply of a connection; the connection closes once it is written.
    private func reply(_ reply: NSSReply, to client: NSSClient) {
        guard clients[client.id] != nil else { return }
        if case .waiting(let key, _) = client.state { lookups[key]?.waiters.remove(client.id) }
        client.state = .replying
        client.output = Array(reply.text.utf8)
        writePending(client)
    }

    private func writePending(_ client: NSSClient) {
        guard clients[client.id] != nil, case .replying = client.state else { return }
        // One reply per connection (as libnss-mdns expects): once it is written, or the peer has gone, it ends.
        if loop.writeQueued(client) != .pending { drop(client) }
    }

    /// Closes a connection.
    private func drop(_ client: NSSClient) {
        guard clients.removeValue(forKey: client.id) != nil else { return }
        if case .waiting(let key, _) = client.state { lookups[key]?.waiters.remove(client.id) }
        loop.unregister(client.fd)
        client.close()
    }
}

extension NSSServer: EngineEventReceiver {
    package func receive(_ event: OperationEvent, for operation: OperationID) {
        if let key = lookupOfOperation[operation] { deliver(event, to: key) }
    }

    package func engineBatchEnded() {}
}
