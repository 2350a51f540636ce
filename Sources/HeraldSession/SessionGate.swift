import HeraldBroker
import HeraldWire

/// The answer of the permission layer for one request. `reason` is for the log; `explanation` (the reason's name
/// and what to do about it) is what a client asking why is told.
package enum AccessDecision: Hashable, Sendable {
    /// Start the operation.
    case allow
    /// Refuse at once with NoAuth; nothing starts (a rule only a new manifest can change).
    case refuse(reason: String, explanation: String)
    /// Accept, report NoAuth in the first reply, and start the operation when access is granted later.
    case park(reason: String, explanation: String)

    /// The explanation of a refusal or a park; nil for `allow`.
    package var explanation: String? {
        switch self {
        case .allow: return nil
        case .refuse(_, let explanation), .park(_, let explanation): return explanation
        }
    }
}

/// Who asks, and what they may do: the identity and permission decisions the sessions need, answered by the front
/// end that knows its connections (the app socket reads the kernel's credentials and `/proc`; the core never does).
package protocol SessionGate: AnyObject {
    /// The caller of the request being handled on `connection`.
    func caller(of connection: ConnectionID) -> CallerIdentity
    /// True when `caller` is an operator now (exempt from the per-user shares).
    func isOperator(_ caller: CallerIdentity) -> Bool
    /// Decides a request. `isNew` is false when a running or parked operation is judged again after a change
    /// of decisions (nothing new is recorded as pending then).
    func decide(_ request: PermissionRequest, for caller: CallerIdentity, isNew: Bool) -> AccessDecision
    /// Judges again, after a change of decisions, the requests of the running or parked operations that `caller`
    /// started: one decision each, in order, as `decide` with `isNew` false would give. The core asks once per
    /// distinct caller in a pass, so the gate works out what it needs about a caller (which app it is, whether it
    /// is an operator) once per caller, not once per operation.
    func decideAgain(_ requests: [PermissionRequest], for caller: CallerIdentity) -> [AccessDecision]
}

/// One client connection of a front end, as the sessions know it.
package struct ConnectionID: Hashable, Comparable, Sendable, CustomStringConvertible {
    package var rawValue: Int
    package init(_ rawValue: Int) { self.rawValue = rawValue }
    package static func < (lhs: ConnectionID, rhs: ConnectionID) -> Bool { lhs.rawValue < rhs.rawValue }
    package var description: String { "\(rawValue)" }
}
