/// Why a request was allowed or refused, in the order the permission model checks them (docs/permissions.md,
/// "Deciding").
/// The raw value is the stable name shown by `herald requests`, the log and the audit trail.
package enum PermissionReason: String, Sendable, Hashable, CaseIterable {
    /// Rule 1: the caller is an operator (uid 0 or a member of the operator group).
    case operatorCaller = "operator"
    /// Rule 2: no registered manifest matches the caller.
    case unregistered = "unregistered"
    /// Rule 3: the manifest has no NSLocalNetworkUsageDescription.
    case noUsageDescription = "no-usage-description"
    /// Rule 4: the service type is not declared and the app lacks the multicast entitlement.
    case undeclaredType = "undeclared-type"
    /// Rule 4: browsing all service types or querying arbitrary names needs the multicast entitlement.
    case entitlementRequired = "entitlement-required"
    /// Rule 5: an operator granted the app.
    case granted = "granted"
    /// Rule 5: an operator denied the app.
    case denied = "denied"
    /// Rule 5: nobody has decided yet; a pending request is recorded.
    case notDetermined = "not-determined"
    /// Address lookups are open to every local user by configuration (docs/permissions.md, "Address lookups").
    case addressLookupsOpen = "address-lookups-open"
    /// The name lies outside `.local` and the link-local reverse zones (RFC 6762 §4): Herald serves no such name,
    /// so the request is refused for everyone, before every other rule (a request the engine would run must be
    /// judged as `.local`).
    case notLocal = "not-local"

    /// True when the request may go ahead.
    package var allows: Bool {
        switch self {
        case .operatorCaller, .granted, .addressLookupsOpen: return true
        default: return false
        }
    }

    /// True for refusals that an operator's decision can lift (rule 5): the request is parked.
    package var isParkable: Bool { self == .denied || self == .notDetermined }

    /// True for refusals that only a new manifest can fix (rules 2–4): the request fails at once.
    package var isStatic: Bool {
        switch self {
        case .unregistered, .noUsageDescription, .undeclaredType, .entitlementRequired, .notLocal: return true
        default: return false
        }
    }

    /// kDNSServiceErr_NoAuth, the status every refusal carries on the app socket.
    package static let noAuthErrorCode: Int32 = -65555
}
