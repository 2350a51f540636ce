#if canImport(Glibc)
import Glibc
#endif
import HeraldBroker
import HeraldEngine
import HeraldIPC
import HeraldWire

/// One connection to the app socket: its frame decoder, its outgoing bytes, and the operations it runs,
/// keyed by the client-context bytes the client chose for each.
final class AppClient: QueuedWriter {
    let id: Int
    let fd: Int32
    let identity: ClientIdentity?
    /// What was fixed about the process that connected (nil: of no app); set once, as the connection is accepted.
    var connection: ConnectingProgram?
    /// The sender of the bytes read last (the kernel does not merge two senders' bytes into one read), to whom the
    /// frames they complete belong.
    var sender: UnixSocket.Sender?
    /// Set once the connecting process has exited or started another program: the connection's operations have
    /// ended and it serves as no app from then on.
    var programEnded: String?
    /// Why the last request of this connection was refused or parked, for a client asking why; cleared by a
    /// request that was not.
    var lastExplanation: String?
    /// True once the log has said why this connection's requests are judged as no app.
    var notedCaller = false
    /// When the connection last had a request or an operation (monotonic milliseconds), for the idle timeout.
    var lastActive: Int64
    var decoder = IPCFrameDecoder()
    var connectionState = IPCConnectionState.new
    /// Error-return sockets passed with SCM_RIGHTS, waiting for the frame they belong to.
    var passedDescriptors: [Int32] = []
    /// Bytes not yet taken by the socket.
    var output: [UInt8] = []
    var waitingToWrite = false
    var operations: [ClientContext: AppOperation] = [:]
    /// Records registered by themselves on this connection (`DNSServiceRegisterRecord`): the record index the
    /// client chose → the context of the record's operation.
    var recordContexts: [UInt32: ClientContext] = [:]
    var closed = false
    /// The position of this client's last reply in the batch being sent (the others carry MoreComing).
    var lastReplyInBatch = 0

    init(id: Int, fd: Int32, identity: ClientIdentity?, now: Int64) {
        self.id = id
        self.fd = fd
        self.identity = identity
        lastActive = now
    }

    /// The connecting process, for the explanations it may ask for on another connection.
    var process: RefusalExplanations.Process? {
        guard let identity, let startTime = identity.startTime else { return nil }
        return RefusalExplanations.Process(pid: identity.pid, startTime: startTime)
    }

    /// The user the connection counts against for the per-user shares (the connecting process's).
    var user: UInt32 { identity?.uid ?? UInt32.max }

    /// Error-return sockets one connection may have waiting: a request passes one, with its last byte.
    static let maximumPassedDescriptors = 4

    /// Keeps descriptors passed with a read for the frame they came with; past `maximumPassedDescriptors` waiting,
    /// the rest are closed at once (a client passing more than its requests use must not fill the daemon's table).
    func holdPassed(_ descriptors: [Int32]) {
        for descriptor in descriptors {
            if passedDescriptors.count < Self.maximumPassedDescriptors {
                passedDescriptors.append(descriptor)
            } else {
                Glibc.close(descriptor)
            }
        }
    }

    /// Closes the passed descriptors no request took.
    func closePassedDescriptors() {
        for descriptor in passedDescriptors { Glibc.close(descriptor) }
        passedDescriptors.removeAll()
    }

    /// Closes the socket and any descriptors still held.
    func close() {
        guard !closed else { return }
        closed = true
        closePassedDescriptors()
        if let pidfd = sender?.pidfd { Glibc.close(pidfd) }
        sender = nil
        if let pidfd = identity?.pidfd { Glibc.close(pidfd) }
        Glibc.close(fd)
    }
}

/// One client request that keeps delivering replies, and the bookkeeping that turns the engine's per-link
/// events into the dnssd API's per-interface results. A reference: the client's table and the owner table of
/// its engine operations hold the same one, so an event reaches it with one lookup and changes it in place.
final class AppOperation {
    enum Kind {
        case browse(type: ServiceType)
        /// A browse of `_services._dns-sd._udp`: each result is a service type.
        case browseServiceTypes
        case resolve(instance: ServiceInstanceName)
        /// A registration, with the instance name asked for (empty: the host's name).
        case register(type: ServiceType, name: String)
        case query(name: DNSName, type: RecordType, recordClass: UInt16)
        case addressLookup(hostname: String)
        /// A record registered by itself, with the index the client gave it.
        case record(name: DNSName, type: RecordType, index: UInt32)
    }

    let kind: Kind
    let context: ClientContext
    /// The engine operations started for it (an address lookup asks for A and AAAA separately).
    let engineOperations: [OperationID]
    /// The request as it was made, for starting it later if it was parked. What the client changed since is kept
    /// apart (`updatedTXT`, `updatedRecord`, `extras`) and applied after it by `startWithChanges`.
    let start: (inout MDNSEngine, Instant) -> Void
    /// True while waiting for a permission decision.
    var parked = false
    /// The request as the access gate judged it, and who asked (judged again as that caller after a change).
    var gated: GatedRequest?
    var caller: CallerIdentity?
    /// How many links of an interface currently report each result (IPv4 and IPv6 of one interface count once).
    var presence: [PresenceKey: Int] = [:]
    /// What a resolve last reported per interface.
    var lastResolved: [Int: ResolvedService] = [:]
    /// A record query or address lookup that asked for negative answers (kDNSServiceFlagsReturnIntermediates).
    var reportsNegativeAnswers = false
    /// Its negative answers as the client sees them.
    var negatives = NegativeAnswerPresence()
    /// Records added to a registration (`DNSServiceAddRecord`), by the index the client gave each.
    var extras: [UInt32: ServiceExtraRecord] = [:]
    /// A registration's TXT record as the client last set it (`DNSServiceUpdateRecord`), if it changed it.
    var updatedTXT: TXTRecord?
    /// A record registered by itself as the client last set it, if it changed it.
    var updatedRecord: (data: RecordData, ttl: UInt32)?
    /// For a browse of a service type: the group of browses it runs in (it has no engine operation of its own).
    let groupKey: BrowseGroup.Key?
    /// The group while the browse runs in it.
    var group: BrowseGroup?

    init(kind: Kind, context: ClientContext, engineOperations: [OperationID],
         start: @escaping (inout MDNSEngine, Instant) -> Void) {
        self.kind = kind
        self.context = context
        self.engineOperations = engineOperations
        self.start = start
        groupKey = nil
    }

    /// `start`, then what the client changed since: an operation started late (it was parked) or again (after a
    /// deny and a new grant) publishes what the client last asked for, not what it first asked for.
    var startWithChanges: (inout MDNSEngine, Instant) -> Void {
        let start = start, id = engineOperations.first, txt = updatedTXT, record = updatedRecord
        let extras = sortedExtras
        return { engine, now in
            start(&engine, now)
            guard let id else { return }
            if let txt { engine.updateTXT(id, txt: txt, at: now) }
            if let record { engine.updateRecord(id, data: record.data, ttl: record.ttl, at: now) }
            if !extras.isEmpty { engine.updateExtraRecords(id, extras, at: now) }
        }
    }

    /// The added records in the order of their indexes.
    var sortedExtras: [ServiceExtraRecord] { extras.sorted { $0.key < $1.key }.map(\.value) }

    /// A browse of a service type, run in the group of browses of its type.
    init(browsing key: BrowseGroup.Key, context: ClientContext) {
        kind = .browse(type: key.type)
        self.context = context
        engineOperations = []
        start = { _, _ in }
        groupKey = key
    }
}

/// One result as a client sees it on one interface: an instance or service type (browse), a record (query), or
/// an address (address lookup). Names compare as DNS names do, ignoring ASCII case.
struct PresenceKey: Hashable {
    var interface: Int
    var name: DNSName? = nil
    var type: UInt16 = 0
    var data: [UInt8] = []
}
