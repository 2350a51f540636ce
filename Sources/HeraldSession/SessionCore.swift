import HeraldBroker
import HeraldEngine
import HeraldIPC
import HeraldWire

/// The limits the sessions keep: every resource a connection can hold in the core has a share per user and a cap
/// for everyone (docs/permissions.md, "Limits"). What a front end holds itself (bytes queued for a socket, idle
/// connections) it limits itself.
package struct SessionLimits: Sendable {
    /// Concurrent connections; the last ``operatorReserve`` of them are kept for operators.
    package var connections = 1024
    /// Connections of one user that is not an operator.
    package var connectionsPerUser = 128
    /// Connections only operators may take, so that no user can lock them out.
    package var operatorReserve = 32
    /// Operations one connection may run at once.
    package var operationsPerConnection = 1024
    /// Operations (running or parked) of all of one user's connections together.
    package var operationsPerUser = 4096
    /// Records one registration may add to its own (`DNSServiceAddRecord`); each change republishes them all.
    package var recordsPerRegistration = 100

    package init() {}
}

/// A line for the daemon's log, as the core asks for it.
package struct SessionLogLine: Hashable, Sendable, CustomStringConvertible {
    package enum Level: Hashable, Sendable { case info, notice, warning }
    package var level: Level
    package var text: String
    package var description: String { "\(level) \(text)" }
}

/// Where a request's status goes, when the front end must carry it: the protocol's own routes for a status word
/// (in band, on a passed socket, on a named socket). An `AsyncErrorReply` status is queued by the core itself.
package enum RequestOutcome: Hashable, Sendable {
    /// A status word for `route` (``StatusReturn/inBand``, ``StatusReturn/passedSocket`` or
    /// ``StatusReturn/namedSocket(path:)``).
    case status(DNSServiceError, route: StatusReturn)
    /// A get-property answer, written on the connection at once, ahead of any reply.
    case property(GetPropertyReply)
    /// Nothing to write now.
    case nothing
}

/// The dnssd client sessions as a state machine (docs/architecture.md, `HeraldSession`): requests come in decoded,
/// with the connection they came on and the time; engine events come in with their operation; a change of access
/// decisions comes in as a call. What must happen is taken out as values: replies per connection (with
/// MoreComing), engine commands, log lines. It reads no clock, no socket and no `/proc`: who asks and what they may
/// do come from the ``SessionGate`` the front end implements.
package final class SessionCore {
    let limits: SessionLimits
    let messageSizeLimit: MessageSizeLimit
    let gate: any SessionGate
    /// True when results are counted and reported per IP family of an interface (Avahi's protocol), not once per
    /// interface (dnssd's): each reply names the family it came over (``ReplyBatch/Entry/family``).
    package let reportsFamilies: Bool
    var sessions: [ConnectionID: Session] = [:]
    /// Which session and operation each engine operation belongs to.
    var owners: [OperationID: (connection: ConnectionID, operation: SessionOperation)] = [:]
    var operationIDs: EngineOperationIDs
    /// The groups of browses of one type, and which group each group's engine operation serves.
    var browseGroups: [BrowseGroup.Key: BrowseGroup] = [:]
    var groupOfOperation: [OperationID: BrowseGroup] = [:]
    /// Replies produced since they were last taken.
    var pendingReplies = ReplyBatch()
    var engineCommands: [EngineCommand] = []
    var logLines: [SessionLogLine] = []
    /// Why each process was last refused, for the question it asks next.
    var explanations = RefusalExplanations()
    /// Refused requests: logged, and remembered for the explanation (``RefusalLog``).
    let refusals = RefusalLog()
    /// Requests that end after a while (kDNSServiceFlagsTimeout, ``RequestTimeouts``).
    var timeouts = RequestTimeouts()
    /// The time of the input being handled (monotonic milliseconds), as the front end gave it.
    var now: Int64 = 0

    /// The version reported for the `DaemonVersion` property.
    package static let daemonVersion: UInt32 = 100

    /// `owner` tags the engine operations the core starts: each front end with a core of its own has its own.
    package init(
        limits: SessionLimits = SessionLimits(), messageSizeLimit: MessageSizeLimit = .default,
        gate: any SessionGate, owner: EngineOperationOwner = .appSessions, reportsFamilies: Bool = false
    ) {
        operationIDs = EngineOperationIDs(owner: owner)
        self.reportsFamilies = reportsFamilies
        self.limits = limits
        self.messageSizeLimit = messageSizeLimit
        self.gate = gate
    }

    /// One connection's state in the core.
    final class Session {
        let id: ConnectionID
        /// The user the connection counts against for the per-user shares (the connecting process's).
        let user: UInt32
        /// The connecting process, for log lines and for the explanations it may ask for on another connection.
        let pid: Int32?
        let process: RefusalExplanations.Process?
        var operations: [ClientContext: SessionOperation] = [:]
        /// Records registered by themselves on this connection (`DNSServiceRegisterRecord`): the record index the
        /// client chose → the context of the record's operation.
        var recordContexts: [UInt32: ClientContext] = [:]
        /// Why the last request of this connection was refused or parked, for a client asking why; cleared by a
        /// request that was not.
        var lastExplanation: String?
        /// Set once the connecting process has exited or started another program.
        var programEnded: String?
        /// The caller of the connection's latest operation, shared by the operations it started.
        private var lastCaller: SharedCaller?

        init(id: ConnectionID, user: UInt32, pid: Int32?, process: RefusalExplanations.Process?) {
            self.id = id
            self.user = user
            self.pid = pid
            self.process = process
        }

        /// `caller`, shared with the connection's earlier operations when they were started by the same caller.
        func share(_ caller: CallerIdentity) -> SharedCaller {
            if let lastCaller, lastCaller.identity == caller { return lastCaller }
            let shared = SharedCaller(caller)
            lastCaller = shared
            return shared
        }
    }

    // MARK: - Connections

    /// Opens a session for a new connection when it is within the limits: the global one (less the operators'
    /// reserve, for anyone else) and its user's share. `startTime` (with `pid`) names the connecting process for
    /// good, for the explanations it may ask for.
    package func open(_ connection: ConnectionID, user: UInt32, pid: Int32?, startTime: UInt64?, isOperator: Bool)
        -> Bool
    {
        precondition(sessions[connection] == nil, "connection \(connection) is open already")
        if sessions.count >= limits.connections
            || (!isOperator && sessions.count >= limits.connections - limits.operatorReserve)
        {
            log(
                .warning,
                "app socket: refusing a client of uid \(user): the limit of \(limits.connections) clients is reached")
            return false
        }
        if !isOperator, connectionCount(of: user) >= limits.connectionsPerUser {
            log(
                .warning,
                "app socket: refusing a client: uid \(user) has \(limits.connectionsPerUser) connections, its share")
            return false
        }
        let process = pid.flatMap { pid in startTime.map { RefusalExplanations.Process(pid: pid, startTime: $0) } }
        sessions[connection] = Session(id: connection, user: user, pid: pid, process: process)
        return true
    }

    /// Ends a connection's session and every operation it ran (registrations say goodbye).
    package func close(_ connection: ConnectionID) {
        guard let session = sessions.removeValue(forKey: connection) else { return }
        refusals.forget(clientID: connection.rawValue)
        halt(session.operations.values.sorted { $0.context.rawValue < $1.context.rawValue })
        session.operations.removeAll()
    }

    /// The connecting process has exited or started another program: the connection's operations end (browses and
    /// queries with NoAuth, registrations with goodbyes), and from now on it serves as no app.
    package func endProgram(of connection: ConnectionID, reason: String) {
        guard let session = sessions[connection], session.programEnded == nil else { return }
        session.programEnded = reason
        explain(
            "unregistered: \(reason), and a connection serves as the app that made it only while that process runs "
                + "that program; reconnect from the app itself", to: session)
        let operations = session.operations.values.sorted { $0.context.rawValue < $1.context.rawValue }
        guard !operations.isEmpty else { return }
        log(.notice, "app socket: client \(connection): ending its \(operations.count) operations: \(reason)")
        halt(operations.filter { !$0.parked })
        for operation in operations {
            session.operations[operation.context] = nil
            queueParkedReply(for: operation, to: connection)
        }
    }

    /// True when the caller behind an open connection is an operator now, as the gate judges it (the operator
    /// rule of docs/permissions.md: what the front ends let only operators do, such as naming the host).
    package func isOperator(_ connection: ConnectionID) -> Bool {
        sessions[connection] != nil && gate.isOperator(gate.caller(of: connection))
    }

    /// True while the connection runs (or has parked) an operation.
    package func hasOperations(_ connection: ConnectionID) -> Bool {
        !(sessions[connection]?.operations.isEmpty ?? true)
    }

    /// The open sessions.
    package var connectionCount: Int { sessions.count }

    /// Operations of all sessions: running, parked, and registrations among them.
    package var operationCounts: (operations: Int, parked: Int, registrations: Int) {
        var result = (operations: 0, parked: 0, registrations: 0)
        for session in sessions.values {
            for operation in session.operations.values {
                result.operations += 1
                if operation.parked { result.parked += 1 }
                if case .register = operation.kind { result.registrations += 1 }
            }
        }
        return result
    }

    /// A connection's operations as values, in the order of their contexts.
    package func operations(of connection: ConnectionID) -> [SessionOperationSnapshot] {
        (sessions[connection]?.operations.values.sorted { $0.context.rawValue < $1.context.rawValue } ?? []).map(
            \.snapshot)
    }

    /// The browse groups running, as (type as spelled, interface, member count), in a stable order.
    package var browseGroupSizes: [(type: String, interface: Int?, members: Int)] {
        browseGroups.values.map { ($0.key.type.description, $0.key.interface, $0.members.count) }
            .sorted { ($0.type, $0.interface ?? -1) < ($1.type, $1.interface ?? -1) }
    }

    /// Requests waiting for their kDNSServiceFlagsTimeout.
    package var timeoutCount: Int { timeouts.count }

    func connectionCount(of user: UInt32) -> Int { sessions.values.reduce(0) { $0 + ($1.user == user ? 1 : 0) } }

    /// The operations, running or parked, of all of `user`'s connections.
    func operationCount(of user: UInt32) -> Int {
        sessions.values.reduce(0) { $0 + ($1.user == user ? $1.operations.count : 0) }
    }

    // MARK: - Outputs

    /// The replies queued since the last call, each connection's last one without MoreComing and the others with it.
    package func takeReplies() -> ReplyBatch {
        var batch = ReplyBatch()
        swap(&batch, &pendingReplies)
        batch.markMoreComing()
        return batch
    }

    /// The engine commands asked for since the last call, in order.
    package func takeEngineCommands() -> [EngineCommand] {
        defer { engineCommands.removeAll() }
        return engineCommands
    }

    /// The log lines asked for since the last call.
    package func takeLog() -> [SessionLogLine] {
        defer { logLines.removeAll() }
        return logLines
    }

    /// True while replies or engine commands wait to be taken.
    package var hasOutput: Bool { !pendingReplies.isEmpty || !engineCommands.isEmpty }

    func log(_ level: SessionLogLine.Level, _ text: String) {
        logLines.append(SessionLogLine(level: level, text: text))
    }

    /// Queues a reply for one connection.
    func queue(_ reply: Reply, to connection: ConnectionID, context: ClientContext, family: IPFamily? = nil) {
        pendingReplies.append(reply, to: connection, context: context, family: family)
    }

    /// Queues one reply for many connections, each with its own context.
    func queue(
        _ reply: Reply, to recipients: some Sequence<(connection: ConnectionID, context: ClientContext)>,
        family: IPFamily? = nil
    ) {
        let body = pendingReplies.add(reply)
        for (connection, context) in recipients {
            pendingReplies.append(body: body, to: connection, context: context, family: family)
        }
    }

    /// The family a result that came over `link` is reported with: its own when the core reports families, else
    /// none (the results of an interface's two families are one).
    func reportedFamily(of link: LinkID) -> IPFamily? { reportsFamilies ? link.family : nil }

    func makeOperationID() -> OperationID { operationIDs.next() }

    // MARK: - Time

    /// When ``advance(to:)`` next has work (a request's kDNSServiceFlagsTimeout).
    package var nextDeadline: Int64? { timeouts.nextDeadline }

    /// Ends the requests whose time is up at `now`.
    package func advance(to now: Int64) {
        self.now = now
        for entry in timeouts.takeDue(at: now) { expire(entry.operation, of: entry.connection, types: entry.types) }
    }

    /// Ends an operation whose time is up, unless the client cancelled it or went away: its engine operations
    /// stop and the client gets one reply carrying kDNSServiceErr_Timeout per record type it asked for.
    private func expire(_ operation: SessionOperation, of connection: ConnectionID, types: [UInt16]) {
        guard let session = sessions[connection], session.operations[operation.context] === operation else { return }
        session.operations[operation.context] = nil
        if !operation.parked { halt([operation]) }
        switch operation.kind {
        case .query(let name, let type, let recordClass):
            queue(
                .query(
                    QueryRecordReply(
                        flags: [], interfaceIndex: 0, error: .timeout, fullname: name.dnssdFullName,
                        rrtype: type.rawValue, rrclass: recordClass == 255 ? 1 : recordClass,
                        rdata: [], ttl: 0)),
                to: connection, context: operation.context)
        case .addressLookup(let hostname):
            for type in types {
                queue(
                    .addrInfo(
                        AddrInfoReply(
                            flags: [], interfaceIndex: 0, error: .timeout, hostname: hostname,
                            rrtype: type, rrclass: 1, rdata: [], ttl: 0)),
                    to: connection, context: operation.context)
            }
        default:
            break
        }
    }
}

extension Reply {
    /// Adds flags to a reply that carries them.
    package mutating func insertFlags(_ extra: DNSServiceFlags) {
        switch self {
        case .browse(var reply):
            reply.flags.formUnion(extra)
            self = .browse(reply)
        case .resolve(var reply):
            reply.flags.formUnion(extra)
            self = .resolve(reply)
        case .registerService(var reply):
            reply.flags.formUnion(extra)
            self = .registerService(reply)
        case .query(var reply):
            reply.flags.formUnion(extra)
            self = .query(reply)
        case .addrInfo(var reply):
            reply.flags.formUnion(extra)
            self = .addrInfo(reply)
        case .enumeration(var reply):
            reply.flags.formUnion(extra)
            self = .enumeration(reply)
        default: break
        }
    }
}
