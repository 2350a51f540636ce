#if canImport(Glibc)
import Glibc
#endif
import HeraldEngine
import HeraldIPC
import HeraldWire

/// One connection to the app socket: its frame decoder, its outgoing bytes, and the operations it runs,
/// keyed by the client-context bytes the client chose for each.
final class AppClient {
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
    /// Records registered on this (shared) connection: the context of each one's operation, by its record index.
    var recordContexts: [UInt32: ClientContext] = [:]
    /// Records added to this connection's service registrations: their types, by registration and record index.
    var addedRecordTypes: [ClientContext: [UInt32: RecordType]] = [:]
    var closed = false

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
        Glibc.close(fd)
    }
}

/// One client request that keeps delivering replies, and the bookkeeping that turns the engine's per-link
/// events into the dnssd API's per-interface results.
struct AppOperation {
    enum Kind {
        case browse(type: ServiceType)
        /// A browse of `_services._dns-sd._udp`: each result is a service type.
        case browseServiceTypes
        case resolve(instance: ServiceInstanceName)
        /// A registration, with the instance name asked for (empty: the host's name).
        case register(type: ServiceType, name: String)
        case query(name: DNSName, type: RecordType, recordClass: UInt16)
        case addressLookup(hostname: String)
        /// A record registered on its own (DNSServiceRegisterRecord).
        case registerRecord(name: DNSName, type: RecordType)
    }

    var kind: Kind
    var context: ClientContext
    /// The engine operations started for it (an address lookup asks for A and AAAA separately).
    var engineOperations: [OperationID]
    /// The request, for starting it later if it was parked.
    var start: (inout MDNSEngine, Instant) -> Void
    /// True while waiting for a permission decision.
    var parked: Bool
    /// The request as the access gate judged it.
    var gated: GatedRequest?
    /// How many links of an interface currently report each result (IPv4 and IPv6 of one interface count once).
    var presence: [String: Int] = [:]
    /// What a resolve last reported per interface.
    var lastResolved: [Int: ResolvedService] = [:]
}
