/// The answer of the permission rules for one request: what to do, why, and for which app.
package struct PermissionDecision: Hashable, Sendable, CustomStringConvertible {
    /// What the daemon does with the request (docs/permissions.md, "Deciding").
    package enum Outcome: String, Hashable, Sendable {
        /// Start the operation.
        case allow
        /// Fail at once with NoAuth and start nothing: rules 2–4, which only a new manifest can change.
        case refuse
        /// Accept, report NoAuth in the first event, and start the operation when the app is granted: rule 5.
        case park
    }

    package let outcome: Outcome
    package let reason: PermissionReason
    package let request: PermissionRequest
    package let target: RequestTarget
    /// The app the caller was recognised as; nil for operators matched by rule 1 and for unregistered callers.
    package let app: AppID?
    /// The request to record for operators, when the app is not determined yet.
    package let pendingRequest: PendingRequest?
    /// Why, in words, with the fix when there is one.
    package let explanation: String

    init(
        outcome: Outcome, reason: PermissionReason, request: PermissionRequest, target: RequestTarget,
        app: AppID?, pendingRequest: PendingRequest? = nil, explanation: String
    ) {
        self.outcome = outcome
        self.reason = reason
        self.request = request
        self.target = target
        self.app = app
        self.pendingRequest = pendingRequest
        self.explanation = explanation
    }

    /// True when the operation may start now.
    package var allows: Bool { outcome == .allow }

    /// kDNSServiceErr_NoAuth for refused and parked requests, nil when allowed.
    package var errorCode: Int32? { allows ? nil : PermissionReason.noAuthErrorCode }

    /// `refuse (undeclared-type): org.example.tictactoe does not declare _other._tcp …`.
    package var description: String { "\(outcome.rawValue) (\(reason.rawValue)): \(explanation)" }

    /// The audit trail's record of this decision for `caller`.
    package func auditEvent(caller: CallerIdentity) -> AuditEvent {
        var detail = request.description + " by " + caller.description
        if !allows { detail += ": " + explanation }
        return AuditEvent(
            app: app, operation: request.operation.rawValue, serviceType: target.serviceTypeText,
            decision: outcome.rawValue, reason: reason.rawValue, detail: detail)
    }
}
