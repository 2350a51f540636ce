import HeraldBroker
import HeraldControl
import HeraldWire
import Logging

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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
            send(
                .failure(
                    id: envelope.id, .unsupportedVersion,
                    "this heraldd speaks control protocol version \(ControlProtocol.version), not "
                        + "\(envelope.version.map(String.init) ?? "(none)"); use herald from the same release"),
                to: client)
            return
        }
        // Checked on every request: the peer's credentials, not the socket's mode, decide.
        guard isOperator(client) else {
            logger.notice(
                "control socket: refused \(envelope.command ?? "a request") from \(actor(client)): not an operator")
            send(
                .failure(
                    id: envelope.id, .notOperator,
                    "only operators may do this: root, or members of the \(operators.groupName) group"), to: client)
            return
        }
        let request: ControlRequest
        do {
            request = try ControlProtocol.decode(ControlRequest.self, from: line)
        } catch {
            let known = ControlRequest.Command.allCases.map(\.rawValue).joined(separator: ", ")
            send(
                .failure(
                    id: envelope.id, .malformedRequest,
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
                let stored = try storeCall { try broker.store.manifests() }
                var page = Page()
                var apps: [ControlApp] = []
                for manifest in stored.dropFirst(max(0, request.offset ?? 0)) {
                    let app = try describe(manifest)
                    guard page.takes(app.encodedLengthBound) else { break }
                    apps.append(app)
                }
                reply.apps = apps
                reply.more = page.full ? true : nil
            case .appShow:
                reply.app = try describe(try appID(request))
            case .grant, .deny, .reset:
                let app = try appID(request)
                let decision: AppDecision =
                    request.command == .grant ? .granted : request.command == .deny ? .denied : .notDetermined
                let change = try storeCall { try broker.decide(app, decision, by: actor(client)) }
                reply.change = "\(change.current.rawValue) (was \(change.previous.rawValue))"
                reply.app = try describe(app)
            case .requests:
                let stored = try storeCall { try broker.store.pendingRequests() }
                var page = Page()
                var requests: [ControlPendingRequest] = []
                for pending in stored.dropFirst(max(0, request.offset ?? 0)).map(Self.pending) {
                    guard page.takes(pending.encodedLengthBound) else { break }
                    requests.append(pending)
                }
                reply.requests = requests
                reply.more = page.full ? true : nil
            case .log:
                let limit = max(1, min(request.limit ?? 50, 10_000))
                let (lines, more) = try auditPage(after: request.after, limit: limit)
                reply.log = lines
                reply.more = more ? true : nil
            case .status:
                reply.status = statusProvider()
            case .subscribe:
                let topics = Set(request.topics ?? ["requests", "decisions", "log"])
                let unknown = topics.subtracting(["requests", "decisions", "log"])
                guard unknown.isEmpty else {
                    throw ControlError(
                        code: .malformedRequest,
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

    /// Fills a reply or event up to ``ControlProtocol/pageLength``; the first item always goes in.
    struct Page {
        private(set) var length = 0
        private(set) var items = 0
        /// True once an item did not fit.
        private(set) var full = false

        /// True when an item of `length` bytes goes in the page.
        mutating func takes(_ itemLength: Int) -> Bool {
            guard !full else { return false }
            if items > 0 && length + itemLength > ControlProtocol.pageLength {
                full = true
                return false
            }
            length += itemLength
            items += 1
            return true
        }
    }

    /// A page of audit lines after `after` (or from the newest `limit` when nil), at most `limit`; `more` when
    /// the page was cut by size.
    private func auditPage(after: Int64?, limit: Int) throws(ControlError) -> (lines: [ControlAuditLine], more: Bool) {
        let start: Int64
        if let after {
            start = after
        } else {
            start = try storeCall { try broker.store.auditSequence(beforeNewest: limit) }
        }
        var page = Page()
        let records = try storeCall {
            try broker.store.auditLog(
                after: start, limit: limit, while: { page.takes(Self.auditLine($0).encodedLengthBound) })
        }
        return (records.records.map(Self.auditLine), records.more)
    }

    private func addApp(_ request: ControlRequest, by actor: String) throws(ControlError)
        -> (ValidatedManifest, String)
    {
        guard let text = request.manifest else {
            throw ControlError(code: .malformedRequest, message: "app-add needs the manifest's text")
        }
        let name = request.fileName ?? ""
        let format: ManifestFormat? = name.hasSuffix(".plist") ? .propertyList : name.hasSuffix(".json") ? .json : nil
        let validated: ValidatedManifest
        do throws(ManifestError) {
            validated = try ManifestParser.parse(Array(text.utf8), format: format)
        } catch {
            throw ControlError(
                code: .invalidManifest,
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
            throw ControlError(
                code: .unknownApp,
                message: "'\(text)' is not an app id (\(error)); "
                    + "'herald app list' shows the registered apps")
        }
    }

    private func describe(_ id: AppID) throws(ControlError) -> ControlApp {
        guard let stored = try storeCall({ try broker.store.manifest(id) }) else {
            throw ControlError(
                code: .unknownApp,
                message: "no app with id \(id) is registered; "
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
            pendingRequests: pending.count, blockedPackets: blockedPackets(manifest.id.rawValue),
            lastBlockedDestination: lastBlockedDestination(manifest.id.rawValue))
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
            failure = ControlError(
                code: .storeFailure, message: "permission store error: \(error); nothing was changed")
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
        return ControlPendingRequest(
            app: request.appID.rawValue, appName: request.appName,
            usageDescription: request.usageDescription, operation: request.operation.rawValue,
            serviceType: request.serviceType, subject: request.subject,
            latestSubject: request.latestSubject, firstSeen: stored.firstSeen,
            lastSeen: stored.lastSeen, count: stored.count)
    }

    static func auditLine(_ record: AuditRecord) -> ControlAuditLine {
        ControlAuditLine(
            sequence: record.sequence, time: record.time, app: record.app,
            operation: record.event.operation, serviceType: record.event.serviceType,
            decision: record.event.decision, reason: record.event.reason, detail: record.event.detail,
            uid: record.uid, count: record.count > 1 ? record.count : nil)
    }

    // MARK: - Notifications

    /// Unread bytes past which a subscriber gets no more `pending-request` events until it reads: they are advisory
    /// (`requests` lists them all), and `herald prompt` does not read while it waits for the operator's answer.
    static let pendingEventBacklog = 64 * 1024
    /// Unread bytes past which a `log` follower is sent nothing more for now: it gets the rest, from where it
    /// stopped, once it has read what it has.
    static let logEventBacklog = 1 << 20

    /// Tells `requests` subscribers about pending requests recorded for the first time: for each app, the newest
    /// of a batch. Repeats are not announced: one prompt per app and request, not per repeat.
    package func notifyPending(_ requests: [StoredPendingRequest]) {
        var newest: [String: StoredPendingRequest] = [:]
        var order: [String] = []
        for request in requests where request.isNew {
            let app = request.request.appID.rawValue.lowercased()
            if newest.updateValue(request, forKey: app) == nil { order.append(app) }
        }
        guard !order.isEmpty else { return }
        for client in clients.values where client.topics.contains("requests") && isOperator(client) {
            for app in order {
                guard let request = newest[app], !client.closed,
                    client.output.count < Self.pendingEventBacklog
                else { break }
                var event = ControlReply(id: nil, event: "pending-request")
                event.request = Self.pending(request)
                send(event, to: client)
            }
        }
    }

    /// Tells `decisions` subscribers that an app's decision changed.
    package func notifyDecision(_ change: DecisionChange) {
        for client in clients.values where client.topics.contains("decisions") && isOperator(client) {
            var event = ControlReply(id: nil, event: "decision")
            event.change = "\(change.current.rawValue) (was \(change.previous.rawValue))"
            event.app = try? describe(change.app)
            if event.app == nil {
                event.app = ControlApp(
                    id: change.app.rawValue, name: change.app.rawValue, decision: change.current.rawValue,
                    decidedBy: nil, decidedAt: nil, executables: [], systemdUnits: [],
                    pinnedExecutables: [], serviceTypes: [], usageDescription: nil, entitlements: [],
                    addedAt: Date(), updatedAt: Date(), pendingRequests: 0)
            }
            send(event, to: client)
        }
    }

    /// Sends `log` subscribers the audit lines they have not seen.
    package func notifyAuditLog() {
        let followers = clients.values.filter { $0.topics.contains("log") }
        guard !followers.isEmpty else { return }
        for client in followers where isOperator(client) { sendLog(to: client) }
    }

    /// Sends a follower the lines after the last it got, in events of at most a page each, until it has
    /// ``logEventBacklog`` unread; the rest follow once it has read that (``resumeLog(_:)``).
    private func sendLog(to client: ControlClient) {
        while !client.closed {
            guard client.output.count < Self.logEventBacklog else {
                client.logHeldBack = true
                return
            }
            guard let page = try? auditPage(after: client.lastLogSequence, limit: 1000),
                let last = page.lines.last
            else { return }
            client.lastLogSequence = last.sequence
            var event = ControlReply(id: nil, event: "log")
            event.log = page.lines
            send(event, to: client)
        }
    }

    /// Called when a client has read everything queued for it: a follower whose lines were held back gets them.
    func resumeLog(_ client: ControlClient) {
        guard client.logHeldBack, client.topics.contains("log"), isOperator(client) else { return }
        client.logHeldBack = false
        sendLog(to: client)
    }
}
