/// Where a registration stands.
public enum RegistrationState: Hashable, Sendable, CustomStringConvertible {
    /// The daemon is checking that the name is free (probing), or the request is on its way.
    case setup
    /// Advertised on the network under `instance` (renamed after a conflict when it differs from the name
    /// asked for).
    case registered(ServiceInstance)
    /// Parked: this app is not (or no longer) permitted to advertise on the local network, so nothing is
    /// advertised. The daemon advertises by itself once an operator grants access. The code is `noAuth`.
    case waiting(DNSServiceError, reason: String)
    /// The registration ended with an error (such as `nameConflict` without renaming); nothing is
    /// advertised.
    case failed(HeraldError)
    /// Withdrawn by the app; the daemon sent goodbyes.
    case cancelled

    /// True for `failed` and `cancelled`.
    public var isFinal: Bool {
        switch self {
        case .failed, .cancelled: return true
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .setup: return "setup"
        case .registered(let instance): return "registered as \(instance)"
        case .waiting(let code, let reason): return "waiting (\(code)): \(reason)"
        case .failed(let error): return "failed: \(error)"
        case .cancelled: return "cancelled"
        }
    }
}
