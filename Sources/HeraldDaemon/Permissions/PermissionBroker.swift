#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HeraldBroker
import HeraldWire
import Logging

/// The permission broker inside the daemon: the access gate of the app socket (BRIEF §1 rules, decided by
/// ``PermissionPolicy`` against a snapshot of the store), and the operators' actions on the store, each of which
/// takes effect at once on running and parked operations.
///
/// Decisions are recorded (audit lines, pending requests) in batches: ``flush()`` writes everything decided since
/// the last call in one transaction, and the daemon calls it as soon as its loop is idle, so that a burst of
/// requests costs one commit instead of one per request. Operator actions are committed before they are reported.
public final class PermissionBroker: AccessGate {
    public let store: PermissionStore
    public private(set) var policy: PermissionPolicy
    /// The manifests and decisions the gate decides with; refreshed after every change.
    public private(set) var snapshot: PermissionSnapshot
    private let callers = CallerInspector()
    private let logger: Logger
    private var unrecorded: [(decision: PermissionDecision, caller: CallerIdentity)] = []
    /// Decisions written within the last minute, which their repeats are not.
    private var auditRepeats = AuditRepeats()
    /// Users whose processes' executables could not be read (logged once each).
    private var unreadableExecutables: Set<UInt32> = []
    /// The last explanation given to each process, for messages that say why (asked for right after a refusal):
    /// the newest in `lastExplanations`, the generation before in `olderExplanations`, so at most twice
    /// ``explanationsKept`` are held however many processes come and go.
    private var lastExplanations: [Int32: String] = [:]
    private var olderExplanations: [Int32: String] = [:]
    static let explanationsKept = 256

    /// Called after an operator action changed manifests or decisions: running operations are judged again.
    public var onAccessChanged: () -> Void = {}
    /// Called with new or repeated pending requests, after they are committed.
    public var onPendingRequests: ([StoredPendingRequest]) -> Void = { _ in }
    /// Called when a decision changed (grant, deny, reset, or an app removed).
    public var onDecisionChanged: (DecisionChange) -> Void = { _ in }
    /// Called after new audit lines were committed.
    public var onAuditLogGrew: () -> Void = {}

    /// Opens the store in `stateDirectory` (created if missing; an existing store is never recreated).
    public convenience init(stateDirectory: String, policy: PermissionPolicy, options: PermissionStore.Options = .init(),
                            logger: Logger) throws(PermissionStoreError) {
        try self.init(store: Self.openStore(stateDirectory: stateDirectory, options: options), policy: policy,
                      logger: logger)
    }

    /// The broker of an open store, which must pass SQLite's integrity check.
    public init(store: PermissionStore, policy: PermissionPolicy, logger: Logger) throws(PermissionStoreError) {
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
    public static func openStore(stateDirectory: String, options: PermissionStore.Options = .init())
    throws(PermissionStoreError) -> PermissionStore {
        if !FileManager.default.fileExists(atPath: stateDirectory) {
            try? FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true,
                                                     attributes: [.posixPermissions: 0o700])
        }
        let store = try PermissionStore(stateDirectory: stateDirectory, options: options)
        // Decisions and manifests are the operators' business: no other user may read the store.
        for suffix in ["", "-wal", "-shm"] { chmod(store.path + suffix, 0o600) }
        return store
    }

    /// True when decisions wait to be written.
    public var hasUnrecordedDecisions: Bool { !unrecorded.isEmpty }

    // MARK: - The gate

    public func decide(_ request: GatedRequest, for client: ClientIdentity, isNew: Bool) -> AccessDecision {
        let decision = permissionDecision(request, for: client)
        if isNew || decision.decision.outcome != .park {
            // A park is always written: each counts towards its app's pending request. Repeats are told apart by
            // program, not process (the explanation may name the process, so it is left out).
            var program = decision.caller
            program.pid = nil
            var repeatKey = decision.decision.auditEvent(caller: program)
            repeatKey.detail = "\(decision.decision.request) by \(program)"
            if decision.decision.outcome == .park || auditRepeats.shouldWrite(repeatKey, at: .now) {
                unrecorded.append((decision.decision, decision.caller))
            }
        }
        if client.pid > 0, decision.decision.outcome != .allow {
            if lastExplanations.count >= Self.explanationsKept, lastExplanations[client.pid] == nil {
                olderExplanations = lastExplanations
                lastExplanations = [:]
            }
            lastExplanations[client.pid] = "\(decision.decision.reason.rawValue): \(decision.decision.explanation)"
        }
        switch decision.decision.outcome {
        case .allow: return .allow
        case .refuse: return .refuse(reason: decision.decision.description)
        case .park: return .park(reason: decision.decision.description)
        }
    }

    /// The policy's decision for `request` from `client`, with the caller as established from the kernel.
    func permissionDecision(_ request: GatedRequest, for client: ClientIdentity)
    -> (decision: PermissionDecision, caller: CallerIdentity) {
        let registry = snapshot.registry
        let caller = callers.identify(client, needsDigest: { registry.needsDigest(forExecutable: $0) })
            ?? CallerInspector.minimal(client)
        if caller.executable == nil, client.pid > 0, unreadableExecutables.insert(client.uid).inserted {
            let message = "permissions: cannot read the executable of pid \(client.pid) (uid \(client.uid)); its app "
                + "can be recognised by systemd unit only. Reading /proc/PID/exe of other users' processes needs "
                + "CAP_SYS_PTRACE, which heraldd.service grants"
            logger.notice("\(message)")
        }
        return (policy.decide(Self.permissionRequest(request), caller: caller, snapshot: snapshot), caller)
    }

    public func explanation(for client: ClientIdentity) -> String? {
        lastExplanations[client.pid] ?? olderExplanations[client.pid]
    }

    /// Writes the decisions made since the last call, in one transaction.
    public func flush() {
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

    static func permissionRequest(_ request: GatedRequest) -> PermissionRequest {
        switch request {
        case .browse(let type): return .browse(type)
        case .browseAllTypes: return .browseAllTypes
        case .resolve(let instance): return .resolve(instance)
        case .register(let type): return .register(type)
        case .query(let name, let type): return .query(name: name, type: type)
        case .addressLookup(let name): return .addressLookup(name)
        case .publishRecord(let name, let type): return .publishRecord(name: name, type: type)
        }
    }

    // MARK: - Operator actions

    /// Registers (or replaces) a validated manifest. Committed before it returns.
    @discardableResult
    public func register(_ manifest: Manifest, by actor: String) throws(PermissionStoreError) -> ManifestChange {
        let change = try store.register(manifest, by: actor)
        if change != .unchanged { try changed() }
        return change
    }

    /// Removes an app with its decision and pending requests.
    @discardableResult
    public func removeApp(_ id: AppID, by actor: String) throws(PermissionStoreError) -> Manifest {
        let previous = snapshot.decision(for: id)
        let manifest = try store.removeApp(id, by: actor)
        try changed()
        onDecisionChanged(DecisionChange(app: id, previous: previous, current: .notDetermined))
        return manifest
    }

    /// Grants, denies or resets an app's access; running and parked operations follow at once.
    @discardableResult
    public func decide(_ id: AppID, _ decision: AppDecision, by actor: String) throws(PermissionStoreError)
    -> DecisionChange {
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
