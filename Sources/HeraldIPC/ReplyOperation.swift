/// The `op` of a reply header (`reply_op_t` in mDNSResponder's `dnssd_ipc.h`).
public enum ReplyOperation: UInt32, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case enumeration = 64
    case registerService = 65
    case browse = 66
    case resolve = 67
    case query = 68
    case registerRecord = 69
    /// Defined, but mDNSResponder answers get-property raw, without a framed reply.
    case getProperty = 70
    /// Port-mapping results: not supported by Herald.
    case portMapping = 71
    case addrInfo = 72
    /// A request's status when the client asked for no error socket (`IPCFlags.noErrorSocket`).
    case asyncError = 73

    public var description: String {
        switch self {
        case .enumeration: return "enumerate-domains reply"
        case .registerService: return "register-service reply"
        case .browse: return "browse reply"
        case .resolve: return "resolve reply"
        case .query: return "query-record reply"
        case .registerRecord: return "register-record reply"
        case .getProperty: return "get-property reply"
        case .portMapping: return "port-mapping reply"
        case .addrInfo: return "get-addr-info reply"
        case .asyncError: return "async error"
        }
    }
}
