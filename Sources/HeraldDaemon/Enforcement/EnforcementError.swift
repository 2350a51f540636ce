/// Why heraldd cannot enforce local-network access in the kernel, in words for the administrator.
enum EnforcementError: Error, CustomStringConvertible {
    /// Something the kernel rules need is missing: a cgroup v2 hierarchy, libnftables, a capability.
    case unavailable(String)
    /// nft refused the ruleset.
    case refused(String)

    var description: String {
        switch self {
        case .unavailable(let reason): return reason
        case .refused(let reason): return "nft refused the rules: \(reason)"
        }
    }
}
