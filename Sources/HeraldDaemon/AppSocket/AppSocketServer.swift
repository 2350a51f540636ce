#if canImport(Glibc)
import Glibc
#endif
import HeraldEngine
import HeraldIPC
import HeraldWire
import Logging

/// Limits that keep one client (or many) from taking the daemon down.
public struct ClientLimits: Sendable {
    /// Concurrent app-socket connections.
    public var clients = 1024
    /// Operations one connection may run at once.
    public var operationsPerClient = 1024
    /// Reply bytes queued for a client that does not read; past this the client is disconnected.
    public var outputBytesPerClient = 1 << 20
    /// Records one registration may add to its own (`DNSServiceAddRecord`); each change republishes them all.
    public var recordsPerRegistration = 100

    public init() {}
}

/// Serves apps on a Unix socket speaking mDNSResponder's dnssd IPC protocol (version 1): decodes each
/// request, asks the access gate, starts engine operations, and turns engine events into replies.
public final class AppSocketServer {
    let loop: EventLoop
    let network: NetworkService
    let gate: AccessGate
    let limits: ClientLimits
    let logger: Logger
    /// The sockets clients connect to: the app socket, then any other path it also serves (mDNSResponder's).
    private var listeners: [UnixListener]
    /// Where the app socket is.
    public var path: String { listeners[0].path }
    /// Every path the app protocol is served on.
    public var paths: [String] { listeners.map(\.path) }

    /// True when the app protocol is already served at `path`, however it is spelled (`/var/run` for `/run`, a
    /// doubled slash): the same file as one of the listeners'.
    public func serves(_ path: String) -> Bool {
        if paths.contains(path) { return true }
        var wanted = stat()
        guard stat(path, &wanted) == 0 else { return false }
        return paths.contains { served in
            var existing = stat()
            return stat(served, &existing) == 0 && existing.st_dev == wanted.st_dev && existing.st_ino == wanted.st_ino
        }
    }
    var clients: [Int: AppClient] = [:]
    /// Which client and operation each engine operation belongs to.
    var owners: [OperationID: (client: AppClient, operation: AppOperation)] = [:]
    private var nextClientID = 1
    private var nextOperationID: UInt64 = 1000
    /// Replies produced while handling one batch of engine actions, sent together with MoreComing set.
    var pendingReplies = ReplyBatch()
    /// The groups of browses of one type, and which group each group's engine operation serves.
    var browseGroups: [BrowseGroup.Key: BrowseGroup] = [:]
    var groupOfOperation: [OperationID: BrowseGroup] = [:]
    /// True while a request is being handled: its status must reach the client before any reply the operation
    /// produced at once (an answer already in the cache), so the batch is flushed only after the status.
    var handlingRequest = false
    /// True while a batch is being sent.
    private var flushing = false
    /// Refused requests: logged, and remembered for the explanation (``RefusalLog``).
    let refusals = RefusalLog()
    /// Requests that end after a while (kDNSServiceFlagsTimeout, ``RequestTimeouts``).
    let timeouts = RequestTimeouts()

    /// The version reported for the `DaemonVersion` property.
    public static let daemonVersion: UInt32 = 100

    /// Listens on `path`, or on `inherited`, a listening socket passed by the service manager (socket activation),
    /// whose file then belongs to the service manager.
    public init(path: String, inherited: Int32? = nil, loop: EventLoop, network: NetworkService, gate: AccessGate,
                limits: ClientLimits, logger: Logger) throws(SystemError) {
        self.loop = loop
        self.network = network
        self.gate = gate
        self.limits = limits
        self.logger = logger
        listeners = [try UnixListener(path: path, inherited: inherited, loop: loop)]
        listeners[0].accepted = { [unowned self] connections in for fd in connections { self.accept(fd) } }
        network.onEvent = { [unowned self] operation, event in self.deliver(event, for: operation) }
        network.onBatchEnd = { [unowned self] in self.flushReplies() }
    }

    /// Also serves the app protocol on `path`, or on `inherited`, another listening socket the service manager
    /// passed: clients there are the same daemon's, under the same limits and permission rules.
    public func listen(alsoAt path: String, inherited: Int32? = nil) throws(SystemError) {
        let listener = try UnixListener(path: path, inherited: inherited, loop: loop)
        listener.accepted = { [unowned self] connections in for fd in connections { self.accept(fd) } }
        listeners.append(listener)
    }

    /// The number of connected clients.
    public var clientCount: Int { clients.count }

    func makeOperationID() -> OperationID {
        nextOperationID += 1
        return OperationID(nextOperationID)
    }

    // MARK: - Connections

    private func accept(_ fd: Int32) {
        guard clients.count < limits.clients else {
            logger.warning("app socket: refusing a client: the limit of \(limits.clients) clients is reached")
            close(fd)
            return
        }
        let client = AppClient(id: nextClientID, fd: fd, identity: ClientIdentity.ofPeer(fd))
        nextClientID += 1
        if loop.watch(client, server: "app socket", logger: logger, read: { [unowned self] in self.readRequests(from: $0) },
                      write: { [unowned self] in self.writePending($0) }) {
            clients[client.id] = client
        }
    }

    private func readRequests(from client: AppClient) {
        for _ in 0..<64 where !client.closed {
            // Never read past the end of the current frame: a descriptor passed with a frame's last byte then
            // arrives with that frame.
            let wanted = max(1, min(client.decoder.bytesWanted, 65_536))
            switch UnixSocket.read(client.fd, maximum: wanted) {
            case .wouldBlock:
                return
            case .closed:
                disconnect(client, reason: nil)
                return
            case .data(let bytes, let descriptors):
                client.holdPassed(descriptors)
                do {
                    for frame in try client.decoder.feed(bytes) { handle(frame, from: client) }
                } catch {
                    disconnect(client, reason: "malformed request: \(error)")
                    return
                }
                // A frame's error socket comes with its last byte, so between frames nothing passed is still owed.
                if client.decoder.isIdle { client.closePassedDescriptors() }
            }
        }
    }

    /// Ends a connection and every operation it ran (registrations say goodbye).
    func disconnect(_ client: AppClient, reason: String?) {
        guard clients[client.id] != nil else { return }
        if let reason { logger.notice("app socket: dropping client \(client.id) (pid \(client.identity?.pid ?? -1)): \(reason)") }
        loop.unregister(client.fd)
        refusals.forget(clientID: client.id)
        halt(client.operations.values.sorted { $0.context.rawValue < $1.context.rawValue })
        client.operations.removeAll()
        client.close()
        clients[client.id] = nil
    }

    // MARK: - Writing

    /// Queues bytes for a client; a client whose queue passes the limit is disconnected.
    func send(_ bytes: [UInt8], to client: AppClient) {
        guard !client.closed else { return }
        if client.output.isEmpty {
            // Nothing waiting: straight to the socket, queueing only what it does not take.
            guard let written = UnixSocket.write(client.fd, bytes[...]) else {
                disconnect(client, reason: nil)
                return
            }
            if written == bytes.count { return }
            client.output = Array(bytes[written...])
        } else {
            client.output += bytes
        }
        if client.output.count > limits.outputBytesPerClient {
            disconnect(client, reason: "it does not read its replies (\(client.output.count) bytes queued)")
            return
        }
        writePending(client)
    }

    private func writePending(_ client: AppClient) {
        guard !client.closed else { return }
        if case .failed = loop.writeQueued(client) { disconnect(client, reason: nil) }
    }

    /// Queues a reply to be sent at the end of the current batch.
    func queue(_ reply: Reply, to client: AppClient, context: ClientContext) {
        pendingReplies.append(reply, to: client, context: context)
    }

    /// Queues one reply for many clients, each with its own context.
    func queue(_ reply: Reply, to recipients: some Sequence<(client: AppClient, context: ClientContext)>) {
        let body = pendingReplies.add(reply)
        for (client, context) in recipients { pendingReplies.append(body: body, to: client, context: context) }
    }

    /// Sends the replies of a batch; all but each client's last carry MoreComing.
    func flushReplies() {
        // A send that fails disconnects its client, which can end engine operations and so produce replies and
        // a batch end of its own: those replies wait for the loop below, so that a client's last reply is always
        // judged over everything it gets.
        guard !handlingRequest, !flushing else { return }
        flushing = true
        defer { flushing = false }
        while !pendingReplies.isEmpty {
            let (entries, bodies) = pendingReplies.take()
            send(entries, bodies: bodies)
        }
    }

    private func send(_ entries: [ReplyBatch.Entry], bodies: [Reply]) {
        for index in entries.indices { entries[index].client.lastReplyInBatch = index }
        // Each body is encoded at most twice, without and with MoreComing. An event that many clients follow (a
        // browse of a popular type) gives them all one body: for each client only its context is written again in
        // the encoded bytes. An empty encoding marks a body that cannot be encoded (a name with a NUL byte, which
        // the protocol's strings cannot carry).
        var encoded = [[UInt8]?](repeating: nil, count: bodies.count * 2)
        for index in entries.indices {
            let entry = entries[index]
            let client = entry.client
            guard !client.closed else { continue }
            let moreComing = index != client.lastReplyInBatch
            let slot = entry.body * 2 + (moreComing ? 1 : 0)
            if encoded[slot] == nil {
                var reply = bodies[entry.body]
                if moreComing { reply.insertFlags(.moreComing) }
                do {
                    encoded[slot] = try reply.frame(context: entry.context).encoded
                } catch {
                    logger.warning("app socket: cannot encode a reply for client \(client.id): \(error)")
                    encoded[slot] = []
                }
            } else if !encoded[slot]!.isEmpty {
                encoded[slot]!.withUnsafeMutableBytes { IPCHeader.writeContext(entry.context, into: $0) }
            }
            guard let bytes = encoded[slot], !bytes.isEmpty else { continue }
            send(bytes, to: client)
        }
    }
}

extension Reply {
    /// Adds flags to a reply that carries them.
    mutating func insertFlags(_ extra: DNSServiceFlags) {
        switch self {
        case .browse(var reply): reply.flags.formUnion(extra); self = .browse(reply)
        case .resolve(var reply): reply.flags.formUnion(extra); self = .resolve(reply)
        case .registerService(var reply): reply.flags.formUnion(extra); self = .registerService(reply)
        case .query(var reply): reply.flags.formUnion(extra); self = .query(reply)
        case .addrInfo(var reply): reply.flags.formUnion(extra); self = .addrInfo(reply)
        case .enumeration(var reply): reply.flags.formUnion(extra); self = .enumeration(reply)
        default: break
        }
    }
}
