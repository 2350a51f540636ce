import HeraldBroker
import HeraldSession
import HeraldWire
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// The permission broker inside the daemon: the access gate of the app socket (the rules of docs/permissions.md,
/// "Deciding", decided by ``PermissionPolicy`` against a snapshot of the store), and the operators' actions on the
/// store, each of which takes effect at once on running and parked operations.
///
/// Decisions are recorded (audit lines, pending requests) in batches: ``flush()`` writes everything decided since
/// the last call in one transaction, and the daemon calls it as soon as its loop is idle, so that a burst of
/// requests costs one commit instead of one per request. Operator actions are committed before they are reported.
package final class PermissionBroker: AccessGate {
    package let store: PermissionStore
    package private(set) var policy: PermissionPolicy
    /// The manifests and decisions the gate decides with; refreshed after every change.
    package private(set) var snapshot: PermissionSnapshot
    private let callers = CallerInspector()

    /// Hashes pinned executables a chunk per turn of `loop` from now on, instead of in one piece.
    package func hashDigests(on loop: EventLoop) throws(SystemError) {
        try callers.digests.start(on: loop)
    }
    private let logger: Logger
    private var unrecorded: [(decision: PermissionDecision, caller: CallerIdentity)] = []
    /// Decisions written within the last minute, which their repeats are not.
    private var auditRepeats = AuditRepeats()
    /// Users whose processes' executables could not be read (logged once each).
    private var unreadableExecutables: Set<UInt32> = []

    /// Called after an operator action changed manifests or decisions: running operations are judged again.
    package var onAccessChanged: () -> Void = {}
    /// Called with new or repeated pending requests, after they are committed.
    package var onPendingRequests: ([StoredPendingRequest]) -> Void = { _ in }
    /// Called when a decision changed (grant, deny, reset, or an app removed).
    package var onDecisionChanged: (DecisionChange) -> Void = { _ in }
    /// Called after new audit lines were committed.
    package var onAuditLogGrew: () -> Void = {}

    /// Opens the store in `stateDirectory` (created if missing; an existing store is never recreated).
    package convenience init(
        stateDirectory: String, policy: PermissionPolicy, options: PermissionStore.Options = .init(),
        logger: Logger
    ) throws(PermissionStoreError) {
        try self.init(
            store: Self.openStore(stateDirectory: stateDirectory, options: options), policy: policy,
            logger: logger)
    }

    /// The broker of an open store, which must pass SQLite's integrity check.
    package init(store: PermissionStore, policy: PermissionPolicy, logger: Logger) throws(PermissionStoreError) {
        let integrity = try store.integrityCheck()
        guard integrity == ["ok"] else {
            throw .corrupt(path: store.path, reason: integrity.prefix(3).joined(separator: "; "))
        }
        self.store = store
        self.policy = policy
        self.logger = logger
        snapshot = try store.snapshot()
    }

    /// Opens the store in `stateDirectory`, creating the directory (mode 0700) and the store if missing; only its
    /// owner may read the files.
    package static func openStore(stateDirectory: String, options: PermissionStore.Options = .init())
        throws(PermissionStoreError) -> PermissionStore
    {
        // A directory that cannot be made is reported by opening the store in it.
        try? Directories.make(stateDirectory, mode: 0o700, parentMode: 0o755)
        let store = try PermissionStore(stateDirectory: stateDirectory, options: options)
        // Decisions and manifests are the operators' business: no other user may read the store.
        for suffix in ["", "-wal", "-shm"] { chmod(store.path + suffix, 0o600) }
        return store
    }

    /// True when decisions wait to be written.
    package var hasUnrecordedDecisions: Bool { !unrecorded.isEmpty }

    // MARK: - The gate

    func identifyConnection(_ peer: ClientIdentity, ready: @escaping (ConnectingProgram?) -> Void) {
        let registry = snapshot.registry
        guard
            var connection = callers.identifyConnection(peer, needsDigest: { registry.needsDigest(forExecutable: $0) })
        else {
            ready(nil)
            return
        }
        if connection.caller.executable == nil, unreadableExecutables.insert(peer.uid).inserted {
            let message =
                "permissions: cannot read the executable of pid \(peer.pid) (uid \(peer.uid)); its app "
                + "can be recognised by systemd unit only. Reading /proc/PID/exe of other users' processes needs "
                + "CAP_SYS_PTRACE, which heraldd.service grants"
            logger.notice("\(message)")
        }
        if let reason = connection.digestUnavailable, let executable = connection.caller.executable {
            logger.notice(
                "permissions: pid \(peer.pid) runs \(executable), whose manifest pins its content, but \(reason)")
        }
        guard connection.needsHashing else {
            ready(connection)
            return
        }
        callers.digests.hash(executableOf: peer.pid, root: ProcessInspector.system.procRoot) { [callers] digest in
            connection.caller.executableSHA256 = digest
            connection.needsHashing = false
            // The file that was hashed is the one the process ran when it connected only if it runs it still.
            ready(callers.stillRuns(connection, peer: peer) ? connection : nil)
        }
    }

    func caller(of peer: ClientIdentity, connection: ConnectingProgram?, sender: UnixSocket.Sender?)
        -> (caller: CallerIdentity, note: String?)
    {
        callers.caller(of: peer, connection: connection, sender: sender)
    }

    func stillRuns(_ connection: ConnectingProgram, peer: ClientIdentity) -> Bool {
        callers.stillRuns(connection, peer: peer)
    }

    func isOperator(_ caller: CallerIdentity) -> Bool {
        policy.operatorRule.isOperator(caller)
    }

    func decide(_ request: PermissionRequest, for caller: CallerIdentity, isNew: Bool) -> AccessDecision {
        access(policy.decide(request, caller: caller, snapshot: snapshot), for: caller, isNew: isNew)
    }

    /// Judges again the operations of one caller after a change of decisions: the caller's standing (operator, app)
    /// is worked out once for all of them.
    func decideAgain(_ requests: [PermissionRequest], for caller: CallerIdentity) -> [AccessDecision] {
        let judged = policy.judge(caller, snapshot: snapshot)
        return requests.map { access(policy.decide($0, for: judged, snapshot: snapshot), for: caller, isNew: false) }
    }

    /// The gate's answer for a decision of the policy, which is queued for the store as ``flush()`` says.
    private func access(_ decision: PermissionDecision, for caller: CallerIdentity, isNew: Bool) -> AccessDecision {
        if isNew || decision.outcome != .park {
            // A park is always written: each counts towards its app's pending request. Repeats are told apart by
            // program, not process (the explanation may name the process, so it is left out).
            var program = caller
            program.pid = nil
            var repeatKey = decision.auditEvent(caller: program)
            repeatKey.detail = "\(decision.request) by \(program)"
            if decision.outcome == .park || auditRepeats.shouldWrite(repeatKey, at: .now) {
                unrecorded.append((decision, caller))
            }
        }
        let explanation = "\(decision.reason.rawValue): \(decision.explanation)"
        switch decision.outcome {
        case .allow: return .allow
        case .refuse: return .refuse(reason: decision.description, explanation: explanation)
        case .park: return .park(reason: decision.description, explanation: explanation)
        }
    }

    /// Writes the decisions made since the last call, in one transaction.
    package func flush() {
        guard !unrecorded.isEmpty else { return }
        let batch = unrecorded
        unrecorded.removeAll()
        do {
            let pending = try store.record(batch)
            if !pending.isEmpty { onPendingRequests(pending) }
            onAuditLogGrew()
        } catch {
            logger.error("permission store: cannot record \(batch.count) decisions: \(error)")
        }
    }

    // MARK: - The kernel rules

    /// The subject of the pending request an app's held-back packets make.
    package static let localNetworkSubject = "the local network"

    /// Records that the kernel rules held back packets of the app `appID` (docs/enforcement.md, "First use asks"):
    /// an app not yet decided, with a usage description, gets its one pending request for the local network (a
    /// repeat counts on it), which operators are told of as of any other request.
    package func recordBlocked(appID: String) {
        guard let id = try? AppID(appID), let manifest = snapshot.registry[id],
            snapshot.decision(for: id) == .notDetermined, let usage = manifest.usageDescription
        else { return }
        let request = PendingRequest(
            appID: id, appName: manifest.name, usageDescription: usage, operation: .localNetwork, serviceType: nil,
            subject: Self.localNetworkSubject)
        do {
            if let stored = try store.recordPending(request) { onPendingRequests([stored]) }
        } catch {
            logger.error("permission store: cannot record the blocked attempt of \(appID): \(error)")
        }
    }

    // MARK: - Operator actions

    /// Registers (or replaces) a validated manifest. Committed before it returns.
    @discardableResult
    package func register(_ manifest: Manifest, by actor: String) throws(PermissionStoreError) -> ManifestChange {
        let change = try store.register(manifest, by: actor)
        if change != .unchanged { try changed() }
        return change
    }

    /// Removes an app with its decision and pending requests.
    @discardableResult
    package func removeApp(_ id: AppID, by actor: String) throws(PermissionStoreError) -> Manifest {
        let previous = snapshot.decision(for: id)
        let manifest = try store.removeApp(id, by: actor)
        try changed()
        onDecisionChanged(DecisionChange(app: id, previous: previous, current: .notDetermined))
        return manifest
    }

    /// Grants, denies or resets an app's access; running and parked operations follow at once.
    @discardableResult
    package func decide(_ id: AppID, _ decision: AppDecision, by actor: String) throws(PermissionStoreError)
        -> DecisionChange
    {
        let change: DecisionChange
        switch decision {
        case .granted: change = try store.grant(id, by: actor)
        case .denied: change = try store.deny(id, by: actor)
        case .notDetermined: change = try store.reset(id, by: actor)
        }
        logger.notice("permissions: \(id) \(decision.rawValue) by \(actor) (was \(change.previous.rawValue))")
        try changed()
        onDecisionChanged(change)
        return change
    }

    private func changed() throws(PermissionStoreError) {
        snapshot = try store.snapshot()
        // After an operator's change, the log shows the decisions made under it, repeats of earlier ones included.
        auditRepeats = AuditRepeats()
        onAuditLogGrew()
        onAccessChanged()
        flush()
    }
}
