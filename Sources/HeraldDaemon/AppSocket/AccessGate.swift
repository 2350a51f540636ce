#if canImport(Glibc)
import Glibc
#endif
import CHeraldSystem
import HeraldWire

/// Who is on the other end of a socket connection, as the kernel reports it (SO_PEERCRED), with a pidfd
/// that keeps naming that process even if its pid is reused later.
public struct ClientIdentity: Hashable, Sendable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
    /// A pidfd of the connecting process (owned by the connection), or nil when the kernel gave none.
    public var pidfd: Int32?
    /// True when the pidfd came from SO_PEERPIDFD (the kernel's own record of the connecting process); false
    /// when it was opened from the pid afterwards.
    public var pidfdIsExact: Bool

    public init(pid: Int32, uid: UInt32, gid: UInt32, pidfd: Int32? = nil, pidfdIsExact: Bool = false) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.pidfd = pidfd
        self.pidfdIsExact = pidfdIsExact
    }

    /// The peer of a connected Unix socket; nil when the kernel does not say.
    public static func ofPeer(_ fd: Int32) -> ClientIdentity? {
        guard let credentials = UnixSocket.peerCredentials(fd) else { return nil }
        var exact: Int32 = 0
        let pidfd = herald_peer_pidfd(fd, credentials.pid, &exact)
        return ClientIdentity(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid,
                              pidfd: pidfd >= 0 ? pidfd : nil, pidfdIsExact: exact == 1)
    }

    /// False once the connecting process has exited (its pid may then name another process).
    public var processIsAlive: Bool {
        guard let pidfd else { return pid > 0 && kill(pid, 0) == 0 || errno == EPERM }
        return herald_pidfd_alive(pidfd) == 1
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
    /// An address lookup (A/AAAA of `name.local`, or a reverse PTR).
    case addressLookup(DNSName)
    /// Publishing a record under a name that is not a service's (DNSServiceRegisterRecord).
    case publishRecord(name: DNSName, type: RecordType)
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
    /// Decides a request. `isNew` is false when a running or parked operation is judged again after a change
    /// of decisions (nothing new is recorded as pending then).
    func decide(_ request: GatedRequest, for client: ClientIdentity, isNew: Bool) -> AccessDecision
    /// Why the last request of `client`'s process was refused or parked, with the fix; nil when unknown.
    func explanation(for client: ClientIdentity) -> String?
}

extension AccessGate {
    public func explanation(for client: ClientIdentity) -> String? { nil }
}

/// The gate used while no permission broker is configured: everything is allowed.
public final class AllowEverything: AccessGate {
    public init() {}
    public func decide(_ request: GatedRequest, for client: ClientIdentity, isNew: Bool) -> AccessDecision { .allow }
}
