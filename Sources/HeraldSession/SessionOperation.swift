import HeraldBroker
import HeraldEngine
import HeraldIPC
import HeraldWire

/// One client request that keeps delivering replies, and the bookkeeping that turns the engine's per-link
/// events into the dnssd API's per-interface results. A reference: the session's table and the owner table of
/// its engine operations hold the same one, so an event reaches it with one lookup and changes it in place.
final class SessionOperation {
    enum Kind: Hashable {
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

        /// The permission request that the kind names by itself: browsing a type or all types, resolving an
        /// instance. nil for kinds whose request depends on more than the kind says.
        var judgedRequest: PermissionRequest? {
            switch self {
            case .browse(let type): return .browse(type)
            case .browseServiceTypes: return .browseAllTypes
            case .resolve(let instance): return .resolve(instance)
            case .register, .query, .addressLookup, .record: return nil
            }
        }
    }

    let kind: Kind
    let context: ClientContext
    /// The engine operations started for it (an address lookup asks for A and AAAA separately).
    let engineOperations: [OperationID]
    /// The request as it was made: the engine commands that start it, kept for starting it later if it was parked.
    /// What the client changed since is kept apart (`updatedTXT`, `updatedRecord`, `extras`) and applied after it
    /// by ``startCommands``.
    let start: [EngineCommand]
    /// True while waiting for a permission decision.
    var parked = false
    /// True when the request the gate judged is the one `kind` names (``Kind/judgedRequest``): then it is not kept
    /// a second time.
    private var gatedIsKind = false
    /// A record query or address lookup that asked for negative answers (kDNSServiceFlagsReturnIntermediates).
    var reportsNegativeAnswers = false
    /// Who asked, held once for all the operations a connection started as the same caller.
    var judgedCaller: SharedCaller?
    /// Which links of an interface currently report each result, a bit per family (IPv4 and IPv6 of one interface
    /// count once).
    var presence: [PresenceKey: Int] = [:]
    /// What a resolve last reported, per interface (and family, when the core reports families): a short array, as a
    /// resolve runs on one or two interfaces, holding only what decides whether an answer is new.
    var lastResolved: [ReportedResolve] = []
    /// Its negative answers as the client sees them.
    var negatives = NegativeAnswerPresence()
    /// Records added to a registration (`DNSServiceAddRecord`), by the index the client gave each.
    var extras: [UInt32: ServiceExtraRecord] = [:]
    /// A registration's TXT record as the client last set it (`DNSServiceUpdateRecord`), if it changed it.
    var updatedTXT: TXTRecord?
    /// The group while the browse runs in it.
    var group: BrowseGroup?
    /// What only some operations have, kept apart so that the others (thousands of resolves at once) carry no room
    /// for it.
    private var rare: Rare?

    /// The state few operations have.
    private final class Rare {
        /// The judged request when `kind` does not name it (registrations, record queries, address lookups).
        var gated: PermissionRequest?
        /// A record registered by itself as the client last set it, if it changed it.
        var updatedRecord: (data: RecordData, ttl: UInt32)?
        /// For a browse of a service type: the group of browses it runs in.
        var groupKey: BrowseGroup.Key?
    }

    init(kind: Kind, context: ClientContext, engineOperations: [OperationID], start: [EngineCommand]) {
        self.kind = kind
        self.context = context
        self.engineOperations = engineOperations
        self.start = start
    }

    /// A browse of a service type, run in the group of browses of its type.
    init(browsing key: BrowseGroup.Key, context: ClientContext) {
        kind = .browse(type: key.type)
        self.context = context
        engineOperations = []
        start = []
        rare = Rare()
        rare?.groupKey = key
    }

    /// The request as the access gate judged it (judged again as `caller` after a change of decisions).
    var gated: PermissionRequest? {
        get { gatedIsKind ? kind.judgedRequest : rare?.gated }
        set {
            gatedIsKind = newValue != nil && newValue == kind.judgedRequest
            if gatedIsKind || newValue == nil {
                rare?.gated = nil
            } else {
                rareForWriting().gated = newValue
            }
        }
    }

    /// Who asked for it, as identified when it was asked for.
    var caller: CallerIdentity? { judgedCaller?.identity }

    /// A record registered by itself as the client last set it, if it changed it.
    var updatedRecord: (data: RecordData, ttl: UInt32)? {
        get { rare?.updatedRecord }
        set {
            if newValue == nil {
                rare?.updatedRecord = nil
            } else {
                rareForWriting().updatedRecord = newValue
            }
        }
    }

    /// For a browse of a service type: the group of browses it runs in (it has no engine operation of its own).
    var groupKey: BrowseGroup.Key? { rare?.groupKey }

    private func rareForWriting() -> Rare {
        if let rare { return rare }
        let made = Rare()
        rare = made
        return made
    }

    /// `start`, then what the client changed since: an operation started late (it was parked) or again (after a
    /// deny and a new grant) publishes what the client last asked for, not what it first asked for.
    var startCommands: [EngineCommand] {
        var commands = start
        guard let id = engineOperations.first else { return commands }
        if let updatedTXT { commands.append(.updateTXT(id, updatedTXT)) }
        if let updatedRecord { commands.append(.updateRecord(id, data: updatedRecord.data, ttl: updatedRecord.ttl)) }
        if !extras.isEmpty { commands.append(.updateExtraRecords(id, sortedExtras)) }
        return commands
    }

    /// The added records in the order of their indexes.
    var sortedExtras: [ServiceExtraRecord] { extras.sorted { $0.key < $1.key }.map(\.value) }

    /// The operation as a value, for tests and for operators.
    var snapshot: SessionOperationSnapshot {
        SessionOperationSnapshot(
            context: context, parked: parked, gated: gated,
            start: groupKey.map { [.browse(OperationID(0), type: $0.type.fullName, interface: $0.interface)] }
                ?? startCommands,
            inBrowseGroup: group != nil)
    }
}

/// An operation of a session as a plain value: what it asked for, and whether it waits for a decision. A parked
/// operation is all here: the gate's question and the engine commands that start it once it is allowed.
package struct SessionOperationSnapshot: Hashable, Sendable, CustomStringConvertible {
    package var context: ClientContext
    package var parked: Bool
    package var gated: PermissionRequest?
    /// The engine commands that start it (a browse of a service type shows its group's browse, with ID 0).
    package var start: [EngineCommand]
    /// True while a browse runs in its type's group.
    package var inBrowseGroup: Bool

    package var description: String {
        "\(context)\(parked ? " parked" : "")\(inBrowseGroup ? " in a browse group" : ""): "
            + start.map(\.description).joined(separator: "; ")
    }
}

/// A caller's identity, held once for all the operations one connection started as that caller: the identity is
/// about a hundred bytes, and a client may start thousands of operations.
final class SharedCaller {
    let identity: CallerIdentity

    init(_ identity: CallerIdentity) {
        self.identity = identity
    }
}

/// What a resolve last reported on one interface: an answer with the same target, port and TXT record is not
/// reported again.
struct ReportedResolve {
    var interface: Int
    var family: IPFamily?
    var target: DNSName
    var port: UInt16
    var txt: TXTRecord

    /// True when `service`, seen on the same interface and family, says nothing new.
    func repeats(_ service: ResolvedService) -> Bool {
        target == service.target && port == service.port && txt == service.txt
    }
}

/// One result as a client sees it on one interface: an instance or service type (browse), a record (query), or
/// an address (address lookup). Names compare as DNS names do, ignoring ASCII case.
struct PresenceKey: Hashable {
    var interface: Int
    /// The link's family, when the core reports families (else the two families of an interface count as one).
    var family: IPFamily? = nil
    var name: DNSName? = nil
    var type: UInt16 = 0
    var data: [UInt8] = []
}

extension Dictionary where Key == PresenceKey, Value == Int {
    /// Notes a result appearing or vanishing on one link (each value holds a bit per IP family of the interface that
    /// reports the result); true when the interface-level answer changed (first link to report it, or last one to
    /// lose it). A link reporting a result it already reported changes nothing, nor does one losing a result it never
    /// reported: when a full cache evicted a record and hears it again, the engine reports it added again.
    mutating func count(_ key: PresenceKey, on link: LinkID, added: Bool) -> Bool {
        let bit = link.family == .ipv4 ? 1 : 2
        // One lookup of the key either way (hashing a name costs more than the rest).
        if added {
            func set(_ links: inout Int) -> Bool {
                defer { links |= bit }
                return links == 0
            }
            return set(&self[key, default: 0])
        }
        guard let index = index(forKey: key), values[index] & bit != 0 else { return false }
        if values[index] != bit {
            values[index] &= ~bit
            return false
        }
        remove(at: index)
        return true
    }
}
