import HeraldBroker
import HeraldEngine
import HeraldIPC
import HeraldSession
import HeraldWire
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Limits that keep one client, one user, or all of them together from taking the daemon down: every resource a
/// connection can hold has a share per user, a cap for everyone, and a timeout or an end (docs/permissions.md,
/// "Limits"). Connections and operations are counted by the session core (``SessionLimits``); what only the socket
/// holds, here.
package struct ClientLimits: Sendable {
    /// Connections, operations and added records, kept by the session core.
    package var sessions = SessionLimits()
    /// Reply bytes queued for a client that does not read; past this the client is disconnected.
    package var outputBytesPerClient = 1 << 20
    /// Reply bytes queued for all of one user's connections, and for everyone's; past either, the connection that
    /// would queue more is disconnected.
    package var outputBytesPerUser = 8 << 20
    package var outputBytesTotal = 48 << 20
    /// A connection that runs no operation and has sent nothing for this long is closed (milliseconds).
    package var idleMilliseconds: Int64 = 60_000

    package init() {}
}

/// Serves apps on a Unix socket speaking mDNSResponder's dnssd IPC protocol (version 1): the shell around the
/// ``SessionCore``. It owns the sockets and descriptors, decodes each request and hands it to the core with the time,
/// writes the replies the core queues, carries out its engine commands, and answers the core's questions about
/// callers through the ``AccessGate``.
package final class AppSocketServer {
    let loop: EventLoop
    let network: NetworkService
    let gate: AccessGate
    let limits: ClientLimits
    let logger: Logger
    /// The sessions: operations, parking, browse groups, replies.
    let core: SessionCore
    /// The sockets clients connect to: the app socket, then any other path it also serves (mDNSResponder's).
    private var listeners: [UnixListener]
    /// Where the app socket is.
    package var path: String { listeners[0].path }
    /// Every path the app protocol is served on.
    package var paths: [String] { listeners.map(\.path) }

    /// True when the app protocol is already served at `path`, however it is spelled (`/var/run` for `/run`, a
    /// doubled slash): the same file as one of the listeners'.
    package func serves(_ path: String) -> Bool {
        if paths.contains(path) { return true }
        var wanted = stat()
        guard stat(path, &wanted) == 0 else { return false }
        return paths.contains { served in
            var existing = stat()
            return stat(served, &existing) == 0 && existing.st_dev == wanted.st_dev && existing.st_ino == wanted.st_ino
        }
    }
    var clients: [Int: AppClient] = [:]
    /// Reply bytes queued per user (the connecting process's uid).
    var queuedBytesOfUser: [UInt32: Int] = [:]
    /// Reply bytes queued for all clients.
    var queuedBytes = 0
    /// Checks connections for idleness and for a connecting process that changed program.
    var sweepTimer: LoopTimer?
    /// Ends requests made with kDNSServiceFlagsTimeout, when the core says.
    var timeoutTimer: LoopTimer?
    private var nextClientID = 1
    /// True while a request is being handled: its status must reach the client before any reply the operation
    /// produced at once (an answer already in the cache), so replies are sent only after the status.
    var handlingRequest = false
    /// True while replies are being sent.
    private var flushing = false
    /// Answers the core's questions about callers (kept apart so that the core holds no reference to the server).
    private let sessionGate: SessionGateAdapter

    /// The version reported for the `DaemonVersion` property.
    package static let daemonVersion = SessionCore.daemonVersion

    /// Listens on `path`, or on `inherited`, a listening socket passed by the service manager (socket activation),
    /// whose file then belongs to the service manager.
    init(
        path: String, inherited: Int32? = nil, loop: EventLoop, network: NetworkService, gate: AccessGate,
        limits: ClientLimits, logger: Logger
    ) throws(SystemError) {
        self.loop = loop
        self.network = network
        self.gate = gate
        self.limits = limits
        self.logger = logger
        sessionGate = SessionGateAdapter(gate: gate, logger: logger)
        core = SessionCore(
            limits: limits.sessions, messageSizeLimit: network.engine.configuration.messageSizeLimit,
            gate: sessionGate)
        listeners = [try UnixListener(path: path, inherited: inherited, loop: loop)]
        sessionGate.server = self
        listeners[0].accepted = { [unowned self] connections in for fd in connections { self.accept(fd) } }
        network.router.register(self, for: .appSessions)
        sweepTimer = try LoopTimer(loop: loop) { [unowned self] in self.sweep() }
        timeoutTimer = try LoopTimer(loop: loop) { [unowned self] in
            self.core.advance(to: MonotonicClock.milliseconds())
            self.flushReplies()
        }
    }

    /// Also serves the app protocol on `path`, or on `inherited`, another listening socket the service manager
    /// passed: clients there are the same daemon's, under the same limits and permission rules.
    package func listen(alsoAt path: String, inherited: Int32? = nil) throws(SystemError) {
        let listener = try UnixListener(path: path, inherited: inherited, loop: loop)
        listener.accepted = { [unowned self] connections in for fd in connections { self.accept(fd) } }
        listeners.append(listener)
    }

    /// The number of connected clients.
    package var clientCount: Int { clients.count }

    /// Operations of all clients: running, parked, and registrations among them.
    var operationCounts: (operations: Int, parked: Int, registrations: Int) { core.operationCounts }

    // MARK: - Connections

    private func accept(_ fd: Int32) {
        let peer = ClientIdentity.ofPeer(fd)
        let client = AppClient(id: nextClientID, fd: fd, identity: peer, now: MonotonicClock.milliseconds())
        nextClientID += 1
        let caller = peer.map { CallerIdentity(pid: $0.pid, uid: $0.uid, groups: [$0.gid]) }
        let admitted = core.open(
            client.connectionID, user: client.user, pid: peer?.pid, startTime: peer?.startTime,
            isOperator: caller.map { gate.isOperator($0) } ?? false)
        writeLog()
        guard admitted else {
            client.close()
            return
        }
        clients[client.id] = client
        // Swept while there are clients; a daemon without any is not woken.
        if sweepTimer?.deadline == nil {
            sweepTimer?.schedule(at: MonotonicClock.milliseconds() + Self.sweepMilliseconds)
        }
        guard let peer else {
            startServing(client)
            return
        }
        // The connection is read only once its process is identified (a pinned executable may take some turns of
        // the loop to hash): every request on it is judged against what it was when it connected.
        gate.identifyConnection(peer) { [weak self, weak client] connection in
            guard let self, let client, !client.closed else { return }
            client.connection = connection
            self.startServing(client)
        }
    }

    /// Starts reading a connection, and watches its connecting process, whose exit ends its operations.
    private func startServing(_ client: AppClient) {
        guard
            loop.watch(
                client, server: "app socket", logger: logger, read: { [unowned self] in self.readRequests(from: $0) },
                write: { [unowned self] in self.writePending($0) })
        else {
            forget(client)
            return
        }
        if let pidfd = client.identity?.pidfd {
            try? loop.register(pidfd, for: .readable) { [unowned self, weak client] _ in
                guard let client, !client.closed else { return }
                self.loop.unregister(pidfd)
                self.endProgram(of: client, reason: "pid \(client.identity?.pid ?? -1), which connected, has exited")
            }
        }
    }

    private func readRequests(from client: AppClient) {
        defer { client.callerOfRead = nil }
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
            case .data(let bytes, let descriptors, let sender):
                client.holdPassed(descriptors)
                // A frame is one sender's: bytes of another sender in the middle of a frame are an attack.
                let mixed = !client.decoder.isIdle && client.sender?.pid != sender?.pid
                // The caller established for this sender in this turn stands for its further frames.
                let previous = client.sender.map { [$0.pid, Int32(bitPattern: $0.uid), Int32(bitPattern: $0.gid)] }
                let current = sender.map { [$0.pid, Int32(bitPattern: $0.uid), Int32(bitPattern: $0.gid)] }
                if current == nil || previous != current { client.callerOfRead = nil }
                if let pidfd = client.sender?.pidfd { close(pidfd) }
                client.sender = sender
                if mixed {
                    disconnect(client, reason: "another process wrote into the middle of a request")
                    return
                }
                client.lastActive = MonotonicClock.milliseconds()
                client.handlingRead = true
                defer { client.handlingRead = false }
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
        if let reason {
            logger.notice("app socket: dropping client \(client.id) (pid \(client.identity?.pid ?? -1)): \(reason)")
        }
        core.close(client.connectionID)
        forget(client)
        runEngineCommands()
    }

    /// Closes a connection and takes it out of the tables and counts (its operations must have ended).
    private func forget(_ client: AppClient) {
        loop.unregister(client.fd)
        if let pidfd = client.identity?.pidfd { loop.unregister(pidfd) }
        core.close(client.connectionID)
        queued(client) { client.output.removeAll() }
        if queuedBytesOfUser[client.user] == 0 { queuedBytesOfUser[client.user] = nil }
        client.close()
        clients[client.id] = nil
    }

    /// Runs `change` on `client`'s output queue, keeping the per-user and total counts of queued bytes.
    func queued<Result>(_ client: AppClient, _ change: () -> Result) -> Result {
        let before = client.output.count
        let result = change()
        let delta = client.output.count - before
        if delta != 0 {
            queuedBytesOfUser[client.user, default: 0] += delta
            queuedBytes += delta
        }
        return result
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
            queued(client) { client.output = Array(bytes[written...]) }
        } else {
            queued(client) { client.output += bytes }
        }
        if client.output.count > limits.outputBytesPerClient {
            disconnect(client, reason: "it does not read its replies (\(client.output.count) bytes queued)")
            return
        }
        if queuedBytesOfUser[client.user, default: 0] > limits.outputBytesPerUser {
            disconnect(
                client,
                reason: "uid \(client.user)'s clients do not read their replies (more than "
                    + "\(limits.outputBytesPerUser) bytes queued, its share)")
            return
        }
        if queuedBytes > limits.outputBytesTotal {
            disconnect(
                client,
                reason: "it does not read its replies, and clients hold more than "
                    + "\(limits.outputBytesTotal) bytes of replies in all")
            return
        }
        writePending(client)
    }

    private func writePending(_ client: AppClient) {
        guard !client.closed else { return }
        if case .failed = queued(client, { loop.writeQueued(client) }) { disconnect(client, reason: nil) }
    }

    // MARK: - Sweeping

    /// How often connections are checked for idleness and for a connecting process that changed program.
    static let sweepMilliseconds: Int64 = 1000

    /// Closes idle connections, and ends the operations of connections whose process started another program.
    private func sweep() {
        let now = MonotonicClock.milliseconds()
        for client in clients.values.sorted(by: { $0.id < $1.id }) where !client.closed {
            if !core.hasOperations(client.connectionID) {
                if now - client.lastActive >= limits.idleMilliseconds {
                    disconnect(client, reason: "idle for \(limits.idleMilliseconds / 1000) s with no operation")
                }
                continue
            }
            client.lastActive = now
            if client.programEnded == nil, let connection = client.connection, let peer = client.identity,
                !gate.stillRuns(connection, peer: peer)
            {
                endProgram(
                    of: client, reason: "pid \(peer.pid), which connected, has exited or started another program")
            }
        }
        flushReplies()
        if !clients.isEmpty { sweepTimer?.schedule(at: now + Self.sweepMilliseconds) }
    }

    /// The connecting process has exited or started another program: the connection's operations end (browses and
    /// queries with NoAuth, registrations with goodbyes), and from now on it serves as no app.
    func endProgram(of client: AppClient, reason: String) {
        guard client.programEnded == nil else { return }
        client.programEnded = reason
        core.endProgram(of: client.connectionID, reason: reason)
        flushReplies()
    }

    /// Re-asks the gate for every operation (after a grant, a deny, a reset): parked operations that are now allowed
    /// start; running ones that are no longer allowed stop with NoAuth (and registrations say goodbye).
    package func accessChanged() {
        core.accessChanged()
        flushReplies()
    }

    // MARK: - Carrying out what the core asks

    /// Runs the engine commands the core asked for, in one step of the engine each time; the events they produce
    /// come back to the core at once (answers already in the cache).
    func runEngineCommands() {
        while true {
            let commands = core.takeEngineCommands()
            if commands.isEmpty { break }
            network.perform { engine, now in
                for command in commands { command.apply(to: &engine, at: now) }
            }
        }
    }

    /// Writes the core's log lines to the daemon's log.
    func writeLog() {
        for line in core.takeLog() {
            switch line.level {
            case .info: logger.info("\(line.text)")
            case .notice: logger.notice("\(line.text)")
            case .warning: logger.warning("\(line.text)")
            }
        }
    }

    /// Sends what the core queued; all but each client's last reply carry MoreComing.
    func flushReplies() {
        // A send that fails disconnects its client, which can end engine operations and so produce replies of
        // its own: those wait for the next turn of the loop below, so that a client's last reply is always judged
        // over everything it gets.
        guard !handlingRequest, !flushing else { return }
        flushing = true
        defer { flushing = false }
        while true {
            runEngineCommands()
            writeLog()
            let batch = core.takeReplies()
            if batch.isEmpty {
                if core.hasOutput { continue }
                break
            }
            send(batch)
        }
        if timeoutTimer?.deadline != core.nextDeadline { timeoutTimer?.schedule(at: core.nextDeadline) }
    }

    private func send(_ batch: ReplyBatch) {
        let (entries, bodies) = (batch.entries, batch.bodies)
        // Each body is encoded at most twice, without and with MoreComing. An event that many clients follow (a
        // browse of a popular type) gives them all one body: for each client only its context is written again in
        // the encoded bytes. An empty encoding marks a body that cannot be encoded (a name with a NUL byte, which
        // the protocol's strings cannot carry).
        var encoded = [[UInt8]?](repeating: nil, count: bodies.count * 2)
        for entry in entries {
            guard let client = clients[entry.connection.rawValue], !client.closed else { continue }
            let slot = entry.body * 2 + (entry.moreComing ? 1 : 0)
            if encoded[slot] == nil {
                var reply = bodies[entry.body]
                if entry.moreComing { reply.insertFlags(.moreComing) }
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

extension AppSocketServer: EngineEventReceiver {
    package func receive(_ event: OperationEvent, for operation: OperationID) { core.receive(event, for: operation) }
    package func engineBatchEnded() { flushReplies() }
}

/// The core's questions about callers, answered from the app socket's connections and its ``AccessGate``.
final class SessionGateAdapter: SessionGate {
    let gate: AccessGate
    let logger: Logger
    weak var server: AppSocketServer?

    init(gate: AccessGate, logger: Logger) {
        self.gate = gate
        self.logger = logger
    }

    /// The caller of the request being handled: the process that sent it (see ``CallerInspector``). Why it does
    /// not pass as the connection's app, when it does not, is logged once per connection.
    func caller(of connection: ConnectionID) -> CallerIdentity {
        guard let client = server?.clients[connection.rawValue], let peer = client.identity else {
            return CallerIdentity(pid: nil, uid: UInt32.max)
        }
        let program = client.programEnded == nil ? client.connection : nil
        let (caller, note) = client.callerOfRead ?? gate.caller(of: peer, connection: program, sender: client.sender)
        if client.handlingRead { client.callerOfRead = (caller, note) }
        if let note, !client.notedCaller {
            client.notedCaller = true
            logger.notice("app socket: client \(client.id): judged as no app: \(note)")
        }
        return caller
    }

    func isOperator(_ caller: CallerIdentity) -> Bool { gate.isOperator(caller) }

    func decide(_ request: PermissionRequest, for caller: CallerIdentity, isNew: Bool) -> AccessDecision {
        gate.decide(request, for: caller, isNew: isNew)
    }

    func decideAgain(_ requests: [PermissionRequest], for caller: CallerIdentity) -> [AccessDecision] {
        gate.decideAgain(requests, for: caller)
    }
}
