import CHeraldSystem
import HeraldBroker
import HeraldControl
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Serves operators on the control socket (docs/permissions.md, "Operators' commands"): app registration,
/// grant/deny/reset, pending requests, the audit log, status, and live notifications. Only operators get in: the
/// socket file is mode 0660 with the operator group, and every request is checked again against the peer's kernel
/// credentials, so a socket whose mode was loosened still refuses everyone else.
package final class ControlSocketServer {
    let loop: EventLoop
    let broker: PermissionBroker
    let operators: OperatorRule
    let logger: Logger
    private let listener: UnixListener
    package var path: String { listener.path }
    var clients: [Int: ControlClient] = [:]
    private var nextClientID = 1
    /// Answers `status`.
    var statusProvider: () -> ControlStatus
    /// The packets of an app (by id) the kernel rules held back; nil when enforcement is off.
    package var blockedPackets: (String) -> Int? = { _ in nil }
    /// Where the latest packet the kernel rules held back of an app (by id) went; nil when none did.
    package var lastBlockedDestination: (String) -> String? = { _ in nil }
    /// Control connections at once, and output bytes queued for one.
    static let clientLimit = 64
    /// Connections of one user who is not an operator (on a socket whose mode was loosened), so that nobody else
    /// can take every connection from the operators.
    static let nonOperatorClientLimit = 4
    static let outputLimit = 4 << 20

    /// Listens on `path` (or on `inherited`, a socket passed by the service manager).
    package init(
        path: String, inherited: Int32? = nil, loop: EventLoop, broker: PermissionBroker, operators: OperatorRule,
        logger: Logger, status: @escaping () -> ControlStatus
    ) throws(SystemError) {
        self.loop = loop
        self.broker = broker
        self.operators = operators
        self.logger = logger
        self.statusProvider = status
        listener = try UnixListener(path: path, inherited: inherited, mode: 0o660, group: operators.groupID, loop: loop)
        listener.accepted = { [unowned self] connections in for fd in connections { self.accept(fd) } }
    }

    private func accept(_ fd: Int32) {
        guard clients.count < Self.clientLimit else {
            logger.warning("control socket: refusing a client: \(Self.clientLimit) are connected")
            close(fd)
            return
        }
        let client = ControlClient(id: nextClientID, fd: fd, identity: ClientIdentity.ofPeer(fd))
        nextClientID += 1
        if !isOperator(client) {
            let user = client.identity?.uid
            let ofUser = clients.values.reduce(0) { $0 + ($1.identity?.uid == user ? 1 : 0) }
            guard ofUser < Self.nonOperatorClientLimit else {
                let message =
                    "control socket: refusing a client of uid \(user.map { "\($0)" } ?? "?"), not an operator: "
                    + "it has \(Self.nonOperatorClientLimit) connections"
                logger.warning("\(message)")
                client.close()
                return
            }
        }
        if loop.watch(
            client, server: "control socket", logger: logger,
            read: { [unowned self] in self.readRequests(from: $0) }, write: { [unowned self] in self.writePending($0) })
        {
            clients[client.id] = client
        }
    }

    private func readRequests(from client: ControlClient) {
        for _ in 0..<64 where !client.closed {
            switch UnixSocket.read(client.fd, maximum: 65_536) {
            case .wouldBlock:
                return
            case .closed:
                disconnect(client, reason: nil)
                return
            case .data(let bytes, let descriptors, let sender):
                for descriptor in descriptors { close(descriptor) }
                client.take(sender)
                do {
                    for line in try client.lines.feed(bytes) {
                        handle(line, from: client)
                        if client.closed { return }
                    }
                } catch {
                    send(.failure(id: nil, .malformedRequest, "\(error)"), to: client)
                    disconnect(client, reason: "\(error)")
                    return
                }
            }
        }
    }

    /// The caller's description for the audit log: `uid 0 (pid 123)`.
    func actor(_ client: ControlClient) -> String {
        guard let identity = client.identity else { return "an unidentified caller" }
        return "uid \(identity.uid) (pid \(identity.pid))"
    }

    /// True when the client is an operator now: uid 0, or the operator group among its groups, as they are now
    /// (a process that connected as root and then dropped to another user is that user). For a request, the
    /// process judged is the one that sent it (``ControlClient/sender``); for a notification, the one that connected.
    func isOperator(_ client: ControlClient) -> Bool {
        guard let identity = client.identity else { return false }
        let processes = ProcessInspector.system
        func current(_ pid: Int32, alive: () -> Bool) -> (uid: UInt32, groups: [UInt32])? {
            guard alive(), let credentials = try? processes.credentials(of: pid), alive() else { return nil }
            return credentials
        }
        let credentials: (uid: UInt32, groups: [UInt32])?
        if let sender = client.sender, sender.pid != identity.pid {
            // Another process than the one that connected: its pidfd proves what /proc says of it; without one, the
            // kernel's word at sending time stands.
            if let pidfd = sender.pidfd {
                credentials = current(sender.pid) { herald_pidfd_alive(pidfd) == 1 }
            } else {
                credentials = (sender.uid, [sender.gid])
            }
        } else {
            credentials = current(identity.pid) { identity.processIsAlive }
        }
        guard let credentials else { return false }
        return operators.isOperator(uid: credentials.uid, groups: credentials.groups)
    }

    func disconnect(_ client: ControlClient, reason: String?) {
        guard clients[client.id] != nil else { return }
        if let reason { logger.notice("control socket: dropping client \(client.id): \(reason)") }
        loop.unregister(client.fd)
        client.close()
        clients[client.id] = nil
    }

    // MARK: - Writing

    func send(_ reply: ControlReply, to client: ControlClient) {
        guard !client.closed else { return }
        do {
            client.output += try ControlProtocol.line(reply)
        } catch {
            logger.warning("control socket: cannot encode a reply: \(error)")
            return
        }
        if client.output.count > Self.outputLimit {
            disconnect(client, reason: "it does not read its replies")
            return
        }
        writePending(client)
    }

    private func writePending(_ client: ControlClient) {
        guard !client.closed else { return }
        switch loop.writeQueued(client) {
        case .failed: disconnect(client, reason: nil)
        case .drained: resumeLog(client)
        case .pending: break
        }
    }
}
