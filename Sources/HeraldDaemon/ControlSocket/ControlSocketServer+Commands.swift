import Foundation
import HeraldBroker
import HeraldControl

/// The commands of the control protocol: each request is checked (version, operator) and answered with one
/// reply; store changes are committed before the reply goes out.
extension ControlSocketServer {
    /// The fields every request line has, read leniently so that a bad line still gets a useful answer.
    private struct Envelope: Decodable {
        var version: Int?
        var id: Int?
        var command: String?
    }

    func handle(_ line: [UInt8], from client: ControlClient) {
        guard let envelope = try? ControlProtocol.decode(Envelope.self, from: line) else {
            send(.failure(id: nil, .malformedRequest, "a request must be one JSON object per line"), to: client)
            return
        }
        guard envelope.version == ControlProtocol.version else {
            send(.failure(id: envelope.id, .unsupportedVersion,
                          "this heraldd speaks control protocol version \(ControlProtocol.version), not "
                              + "\(envelope.version.map(String.init) ?? "(none)"); use herald from the same release"),
                 to: client)
            return
        }
        // Checked on every request: the peer's credentials, not the socket's mode, decide.
        guard isOperator(client) else {
            logger.notice("control socket: refused \(envelope.command ?? "a request") from \(actor(client)): not an operator")
            send(.failure(id: envelope.id, .notOperator,
                          "only operators may do this: root, or members of the \(operators.groupName) group"), to: client)
            return
        }
        let request: ControlRequest
        do {
            request = try ControlProtocol.decode(ControlRequest.self, from: line)
        } catch {
            let known = ControlRequest.Command.allCases.map(\.rawValue).joined(separator: ", ")
            send(.failure(id: envelope.id, .malformedRequest,
                          "cannot read the request (\(envelope.command ?? "no command")); the commands are: \(known)"),
                 to: client)
            return
        }
        send(execute(request, from: client), to: client)
    }

    private func execute(_ request: ControlRequest, from client: ControlClient) -> ControlReply {
        let id = request.id
        do throws(ControlError) {
            var reply = ControlReply(id: id)
            switch request.command {
            case .appAdd:
                let (validated, change) = try addApp(request, by: actor(client))
                reply.change = change
                reply.warnings = validated.warnings.map(\.text)
                reply.app = try describe(validated.manifest.id)
            case .appRemove:
                let app = try appID(request)
                try storeCall { try broker.removeApp(app, by: actor(client)) }
                reply.change = "removed"
            case .appList:
                var apps: [ControlApp] = []
                for stored in try storeCall({ try broker.store.manifests() }) { apps.append(try describe(stored)) }
                reply.apps = apps
            case .appShow:
                reply.app = try describe(try appID(request))
            case .grant, .deny, .reset:
                let app = try appID(request)
                let decision: AppDecision = request.command == .grant ? .granted : request.command == .deny ? .denied : .notDetermined
                let change = try storeCall { try broker.decide(app, decision, by: actor(client)) }
                reply.change = "\(change.current.rawValue) (was \(change.previous.rawValue))"
                reply.app = try describe(app)
            case .requests:
                reply.requests = try storeCall { try broker.store.pendingRequests() }.map(Self.pending)
            case .log:
                let limit = max(1, min(request.limit ?? 50, 10_000))
                let records = try storeCall {
                    if let after = request.after { return try broker.store.auditLog(after: after, limit: limit) }
                    return try broker.store.recentAuditLog(limit)
                }
                reply.log = records.map(Self.auditLine)
            case .status:
                reply.status = statusProvider()
            case .subscribe:
                let topics = Set(request.topics ?? ["requests", "decisions", "log"])
                let unknown = topics.subtracting(["requests", "decisions", "log"])
                guard unknown.isEmpty else {
                    throw ControlError(code: .malformedRequest,
                                       message: "unknown topics \(unknown.sorted()); the topics are requests, decisions, log")
                }
                client.topics = topics
                if let after = request.after {
                    client.lastLogSequence = after
                } else {
                    client.lastLogSequence = try storeCall { try broker.store.recentAuditLog(1) }.last?.sequence ?? 0
                }
            }
            return reply
        } catch {
            return ControlReply(id: id, ok: false, error: error)
        }
    }

    private func addApp(_ request: ControlRequest, by actor: String) throws(ControlError)
    -> (ValidatedManifest, String) {
        guard let text = request.manifest else {
            throw ControlError(code: .malformedRequest, message: "app-add needs the manifest's text")
        }
        let name = request.fileName ?? ""
        let format: ManifestFormat? = name.hasSuffix(".plist") ? .propertyList : name.hasSuffix(".json") ? .json : nil
        let validated: ValidatedManifest
        do throws(ManifestError) {
            validated = try ManifestParser.parse(Array(text.utf8), format: format)
        } catch {
            throw ControlError(code: .invalidManifest,
                               message: "the manifest is not valid (\(error.problems.count) problem"
                                   + "\(error.problems.count == 1 ? "" : "s")); nothing was stored",
                               problems: error.problems.map(\.description))
        }
        let change = try storeCall { try broker.register(validated.manifest, by: actor) }
        switch change {
        case .added: return (validated, "added")
        case .updated(let summary): return (validated, "updated: \(summary)")
        case .unchanged: return (validated, "unchanged")
        }
    }

    private func appID(_ request: ControlRequest) throws(ControlError) -> AppID {
        guard let text = request.app else {
            throw ControlError(code: .malformedRequest, message: "\(request.command.rawValue) needs an app id")
        }
        do throws(AppIDError) {
            return try AppID(text)
        } catch {
            throw ControlError(code: .unknownApp, message: "'\(text)' is not an app id (\(error)); "
                                   + "'herald app list' shows the registered apps")
        }
    }

    private func describe(_ id: AppID) throws(ControlError) -> ControlApp {
        guard let stored = try storeCall({ try broker.store.manifest(id) }) else {
            throw ControlError(code: .unknownApp, message: "no app with id \(id) is registered; "
                                   + "'herald app list' shows the registered apps")
        }
        return try describe(stored)
    }

    private func describe(_ stored: StoredManifest) throws(ControlError) -> ControlApp {
        let manifest = stored.manifest
        let record = try storeCall { try broker.store.decisionRecord(for: manifest.id) }
        let pending = try storeCall { try broker.store.pendingRequests(for: manifest.id) }
        return ControlApp(
            id: manifest.id.rawValue, name: manifest.name,
            decision: (record?.decision ?? .notDetermined).rawValue, decidedBy: record?.decidedBy,
            decidedAt: record?.time, executables: manifest.executables, systemdUnits: manifest.systemdUnits,
            pinnedExecutables: manifest.executableSHA256.keys.sorted(),
            serviceTypes: manifest.bonjourServices.map(\.description), usageDescription: manifest.usageDescription,
            entitlements: manifest.entitlements, addedAt: stored.addedAt, updatedAt: stored.updatedAt,
            pendingRequests: pending.count)
    }

    @discardableResult
    private func storeCall<T>(_ body: () throws -> T) throws(ControlError) -> T {
        let failure: ControlError
        do {
            return try body()
        } catch let error as PermissionStoreError {
            failure = Self.controlError(error)
        } catch let error as ControlError {
            failure = error
        } catch {
            failure = ControlError(code: .storeFailure, message: "permission store error: \(error); nothing was changed")
        }
        // The operator is told to look here: say what went wrong with the store.
        if failure.code == .storeFailure { logger.error("control socket: \(failure.message)") }
        throw failure
    }

    static func controlError(_ error: PermissionStoreError) -> ControlError {
        switch error {
        case .unknownApp: return ControlError(code: .unknownApp, message: error.description)
        case .selectorConflict: return ControlError(code: .selectorConflict, message: error.description)
        default: return ControlError(code: .storeFailure, message: error.description)
        }
    }

    static func pending(_ stored: StoredPendingRequest) -> ControlPendingRequest {
        let request = stored.request
        return ControlPendingRequest(app: request.appID.rawValue, appName: request.appName,
                                     usageDescription: request.usageDescription, operation: request.operation.rawValue,
                                     serviceType: request.serviceType, subject: request.subject,
                                     firstSeen: stored.firstSeen, lastSeen: stored.lastSeen, count: stored.count)
    }

    static func auditLine(_ record: AuditRecord) -> ControlAuditLine {
        ControlAuditLine(sequence: record.sequence, time: record.time, app: record.app,
                         operation: record.event.operation, serviceType: record.event.serviceType,
                         decision: record.event.decision, reason: record.event.reason, detail: record.event.detail)
    }

    // MARK: - Notifications

    /// Tells `requests` subscribers about new or repeated pending requests.
    public func notifyPending(_ requests: [StoredPendingRequest]) {
        for client in clients.values where client.topics.contains("requests") && isOperator(client) {
            for request in requests {
                var event = ControlReply(id: nil, event: "pending-request")
                event.request = Self.pending(request)
                send(event, to: client)
            }
        }
    }

    /// Tells `decisions` subscribers that an app's decision changed.
    public func notifyDecision(_ change: DecisionChange) {
        for client in clients.values where client.topics.contains("decisions") && isOperator(client) {
            var event = ControlReply(id: nil, event: "decision")
            event.change = "\(change.current.rawValue) (was \(change.previous.rawValue))"
            event.app = try? describe(change.app)
            if event.app == nil {
                event.app = ControlApp(id: change.app.rawValue, name: change.app.rawValue, decision: change.current.rawValue,
                                       decidedBy: nil, decidedAt: nil, executables: [], systemdUnits: [],
                                       pinnedExecutables: [], serviceTypes: [], usageDescription: nil, entitlements: [],
                                       addedAt: Date(), updatedAt: Date(), pendingRequests: 0)
            }
            send(event, to: client)
        }
    }

    /// Sends `log` subscribers the audit lines they have not seen.
    public func notifyAuditLog() {
        let followers = clients.values.filter { $0.topics.contains("log") }
        guard !followers.isEmpty else { return }
        for client in followers where isOperator(client) {
            guard let records = try? broker.store.auditLog(after: client.lastLogSequence, limit: 1000),
                  !records.isEmpty else { continue }
            client.lastLogSequence = records.last?.sequence ?? client.lastLogSequence
            var event = ControlReply(id: nil, event: "log")
            event.log = records.map(Self.auditLine)
            send(event, to: client)
        }
    }
}
