import HeraldWire

/// Who is on the other end of an app-socket connection, as the kernel reports it (SO_PEERCRED).
public struct ClientIdentity: Hashable, Sendable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32

    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }
}

/// A request that needs a permission decision before any operation starts.
public enum GatedRequest: Hashable, Sendable {
    case browse(ServiceType)
    /// Browsing every service type (`_services._dns-sd._udp`).
    case browseAllTypes
    case resolve(ServiceInstanceName)
    case register(ServiceType)
    /// A record query for an arbitrary name and type.
    case query(name: DNSName, type: RecordType)
    /// An address lookup (A/AAAA of `name.local`).
    case addressLookup(DNSName)
}

/// The answer of the permission layer for one request.
public enum AccessDecision: Hashable, Sendable {
    /// Start the operation.
    case allow
    /// Refuse at once with NoAuth; nothing starts (a rule only a new manifest can change).
    case refuse(reason: String)
    /// Accept, report NoAuth in the first reply, and start the operation when access is granted later.
    case park(reason: String)
}

/// Decides every gated request between "received" and "started". The daemon asks it for each request and
/// is told when decisions change (see ``AppSocketServer/accessChanged(for:)``).
public protocol AccessGate: AnyObject {
    func decide(_ request: GatedRequest, for client: ClientIdentity) -> AccessDecision
}

/// The gate used while no permission broker is configured: everything is allowed.
public final class AllowEverything: AccessGate {
    public init() {}
    public func decide(_ request: GatedRequest, for client: ClientIdentity) -> AccessDecision { .allow }
}
