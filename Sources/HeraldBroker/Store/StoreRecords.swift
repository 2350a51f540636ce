#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One line of the audit trail, before the store stamps it with its time and sequence number.
package struct AuditEvent: Hashable, Sendable {
    /// The app concerned; nil for unregistered callers and operators.
    package var app: AppID?
    /// `browse`, `resolve`, … for requests; `app-add`, `app-update`, `app-remove`, `grant`, `deny`, `reset` for
    /// operator actions.
    package var operation: String
    /// The service type concerned, when there is one.
    package var serviceType: String?
    /// `allow`, `refuse`, `park` for requests; the resulting state for operator actions.
    package var decision: String
    /// The ``PermissionReason`` raw value for requests; `operator` for operator actions.
    package var reason: String
    /// Free text: the request and the caller, or what changed.
    package var detail: String

    package init(
        app: AppID?, operation: String, serviceType: String? = nil, decision: String, reason: String,
        detail: String
    ) {
        self.app = app
        self.operation = operation
        self.serviceType = serviceType
        self.decision = decision
        self.reason = reason
        self.detail = detail
    }
}

/// What a line of the audit trail records, which decides how long it is kept: operator actions and decisions on
/// requests are bounded apart (``PermissionStore/Options``), so that requests never push an operator action out.
package enum AuditLineKind: Int, Hashable, Sendable {
    /// Registering, changing or removing a manifest; granting, denying or resetting an app.
    case operatorAction = 0
    /// The decision on a request of a client (an app, a user, an operator's own program).
    case request = 1
}

/// A line of the audit trail as stored.
package struct AuditRecord: Hashable, Sendable {
    /// Increases with every line, never reused: `herald log --follow` asks for lines after the last it saw. A line
    /// that folds a user's decisions is written again, with a new sequence number, each time it counts more.
    package var sequence: Int64
    package var time: Date
    /// The app id as recorded (kept as text: the app may have been removed since).
    package var app: String?
    package var event: AuditEvent
    package var kind: AuditLineKind = .request
    /// The caller's uid, for decisions on requests.
    package var uid: UInt32?
    /// How many decisions the line stands for: 1, or more for a line that folds one user's decisions of one reason
    /// within a window (operation `folded`).
    package var count: Int = 1
}

/// A registered manifest as stored.
package struct StoredManifest: Hashable, Sendable {
    package var manifest: Manifest
    package var addedAt: Date
    package var updatedAt: Date
}

/// An app's decision as stored: who made it and when. `.notDetermined` apps have none.
package struct DecisionRecord: Hashable, Sendable {
    package var app: AppID
    package var decision: AppDecision
    package var time: Date
    /// Who decided, as the caller of the store described them (`uid 0`, `alice (uid 1000)`).
    package var decidedBy: String
}

/// A pending request as stored, with when it was first and last seen and how many times.
package struct StoredPendingRequest: Hashable, Sendable {
    package var request: PendingRequest
    package var firstSeen: Date
    package var lastSeen: Date
    package var count: Int
    /// True when the call that returned it recorded it for the first time (not a repeat of a stored request).
    package var isNew: Bool = false
}

/// What registering a manifest did.
package enum ManifestChange: Hashable, Sendable {
    /// A new app.
    case added
    /// The app existed; its manifest changed (the summary lists what) and its decision was kept.
    case updated(summary: String)
    /// The same manifest was registered again; nothing was written.
    case unchanged
}

/// What a grant, deny or reset did: the decision before and after.
package struct DecisionChange: Hashable, Sendable {
    package var app: AppID
    package var previous: AppDecision
    package var current: AppDecision

    package init(app: AppID, previous: AppDecision, current: AppDecision) {
        self.app = app
        self.previous = previous
        self.current = current
    }

    /// True when the decision actually changed.
    package var changed: Bool { previous != current }
}
