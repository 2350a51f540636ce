/// Where a long-running operation (a browse, a registration) stands, in the spirit of Network.framework's
/// `NWBrowser.State`.
public enum OperationState: Hashable, Sendable, CustomStringConvertible {
    /// The request is on its way to the daemon.
    case setup
    /// The daemon runs the operation; results come as they are found.
    case ready
    /// The daemon accepted the operation but parked it: this app is not (or no longer) permitted to use the
    /// local network for it. The operation stays open and becomes `ready` by itself when an operator grants
    /// access; nothing needs to be retried. The code is `noAuth`.
    case waiting(DNSServiceError, reason: String)
    /// The operation ended with an error; nothing follows.
    case failed(HeraldError)
    /// The operation was cancelled by the app; nothing follows.
    case cancelled

    /// The reason given for a parked operation when the daemon does not explain it. Herald's daemon does (its
    /// `HeraldPermissionExplanation` property: `not-determined: org.example.app has not been granted; …`), and
    /// that text replaces this one.
    public static let parkedReason =
        "an operator has not allowed this app on the local network yet (herald requests lists it); it carries on once granted"

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
        case .ready: return "ready"
        case .waiting(let code, let reason): return "waiting (\(code)): \(reason)"
        case .failed(let error): return "failed: \(error)"
        case .cancelled: return "cancelled"
        }
    }
}
