#if canImport(Glibc)
import Glibc
#endif
import HeraldEngine
import HeraldIPC
import HeraldWire

/// One connection to the app socket: its frame decoder, its outgoing bytes, and the operations it runs,
/// keyed by the client-context bytes the client chose for each.
final class AppClient: QueuedWriter {
    let id: Int
    let fd: Int32
    let identity: ClientIdentity?
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

    init(id: Int, fd: Int32, identity: ClientIdentity?) {
        self.id = id
        self.fd = fd
        self.identity = identity
    }

    /// Closes the socket and any descriptors still held.
    func close() {
        guard !closed else { return }
        closed = true
        for descriptor in passedDescriptors { Glibc.close(descriptor) }
        passedDescriptors.removeAll()
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
    /// The request, for starting it later if it was parked.
    var start: (inout MDNSEngine, Instant) -> Void
    /// True while waiting for a permission decision.
    var parked = false
    /// The request as the access gate judged it.
    var gated: GatedRequest?
    /// How many links of an interface currently report each result (IPv4 and IPv6 of one interface count once).
    var presence: [PresenceKey: Int] = [:]
    /// What a resolve last reported per interface.
    var lastResolved: [Int: ResolvedService] = [:]
    /// Records added to a registration (`DNSServiceAddRecord`), by the index the client gave each.
    var extras: [UInt32: ServiceExtraRecord] = [:]
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
