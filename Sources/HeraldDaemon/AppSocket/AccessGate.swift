import CHeraldSystem
import HeraldBroker
import HeraldSession
import HeraldWire

#if canImport(Glibc)
    import Glibc
#endif

/// Who is on the other end of a socket connection, as the kernel reports it (SO_PEERCRED), with a pidfd
/// that keeps naming that process even if its pid is reused later.
package struct ClientIdentity: Hashable, Sendable {
    package var pid: Int32
    package var uid: UInt32
    package var gid: UInt32
    /// A pidfd of the connecting process (owned by the connection), or nil when the kernel gave none.
    package var pidfd: Int32?
    /// True when the pidfd came from SO_PEERPIDFD (the kernel's own record of the connecting process); false
    /// when it was opened from the pid afterwards.
    package var pidfdIsExact: Bool
    /// When the connecting process started (clock ticks after boot), read while its pidfd showed it running; nil
    /// when unknown. With the pid, it names the process for good: a later process given the same pid started later.
    package var startTime: UInt64?

    package init(
        pid: Int32, uid: UInt32, gid: UInt32, pidfd: Int32? = nil, pidfdIsExact: Bool = false,
        startTime: UInt64? = nil
    ) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.pidfd = pidfd
        self.pidfdIsExact = pidfdIsExact
        self.startTime = startTime
    }

    /// The peer of a connected Unix socket; nil when the kernel does not say.
    package static func ofPeer(_ fd: Int32) -> ClientIdentity? {
        guard let credentials = UnixSocket.peerCredentials(fd) else { return nil }
        var exact: Int32 = 0
        let pidfd = herald_peer_pidfd(fd, credentials.pid, &exact)
        var identity = ClientIdentity(
            pid: credentials.pid, uid: credentials.uid, gid: credentials.gid,
            pidfd: pidfd >= 0 ? pidfd : nil, pidfdIsExact: exact == 1)
        if credentials.pid > 0, let started = try? ProcessInspector.system.startTime(of: credentials.pid),
            identity.processIsAlive
        {
            identity.startTime = started
        }
        return identity
    }

    /// False once the connecting process has exited (its pid may then name another process).
    package var processIsAlive: Bool {
        guard let pidfd else { return pid > 0 && kill(pid, 0) == 0 || errno == EPERM }
        return herald_pidfd_alive(pidfd) == 1
    }
}

/// Decides every gated request between "received" and "started". The daemon asks it who made each connection
/// (once, as it is accepted), who sent each request, and for each request's decision; it is told when decisions
/// change (see ``AppSocketServer/accessChanged()``).
protocol AccessGate: AnyObject {
    /// What is fixed about the process that made a connection; nil when it is of no app. `ready` is called with
    /// it, at once or (when a pinned executable must be hashed first) on a later turn of the loop.
    func identifyConnection(_ peer: ClientIdentity, ready: @escaping (ConnectingProgram?) -> Void)
    /// The caller of one request: its sender, as the kernel attached it to the message; `note` says why it does
    /// not pass as the connection's app, when that is the case.
    func caller(of peer: ClientIdentity, connection: ConnectingProgram?, sender: UnixSocket.Sender?)
        -> (caller: CallerIdentity, note: String?)
    /// True while the connecting process runs the program it connected with.
    func stillRuns(_ connection: ConnectingProgram, peer: ClientIdentity) -> Bool
    /// True when `caller` is an operator now (exempt from the per-user shares of connections).
    func isOperator(_ caller: CallerIdentity) -> Bool
    /// Decides a request. `isNew` is false when a running or parked operation is judged again after a change
    /// of decisions (nothing new is recorded as pending then).
    func decide(_ request: PermissionRequest, for caller: CallerIdentity, isNew: Bool) -> AccessDecision
    /// Judges again, after a change of decisions, the requests of running or parked operations that `caller`
    /// started, one decision each, in order; what is known about the caller is worked out once for all of them.
    func decideAgain(_ requests: [PermissionRequest], for caller: CallerIdentity) -> [AccessDecision]
}

/// The gate used while no permission broker is configured: everything is allowed.
final class AllowEverything: AccessGate {
    init() {}
    func identifyConnection(_ peer: ClientIdentity, ready: @escaping (ConnectingProgram?) -> Void) { ready(nil) }
    func caller(of peer: ClientIdentity, connection: ConnectingProgram?, sender: UnixSocket.Sender?)
        -> (caller: CallerIdentity, note: String?)
    {
        (CallerIdentity(pid: sender?.pid ?? peer.pid, uid: sender?.uid ?? peer.uid), nil)
    }
    func stillRuns(_ connection: ConnectingProgram, peer: ClientIdentity) -> Bool { true }
    func isOperator(_ caller: CallerIdentity) -> Bool { true }
    func decide(_ request: PermissionRequest, for caller: CallerIdentity, isNew: Bool) -> AccessDecision { .allow }
    func decideAgain(_ requests: [PermissionRequest], for caller: CallerIdentity) -> [AccessDecision] {
        requests.map { _ in .allow }
    }
}
