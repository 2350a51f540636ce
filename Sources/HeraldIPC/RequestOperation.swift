/// The `op` of a request header (`request_op_t` in mDNSResponder's `dnssd_ipc.h`).
///
/// mDNSResponder also defines 16 (`send_bpf`, obsolete), 17 (`getpid`), 18 (`release`) and
/// 19 (`connection_delegate`), all private to Apple platforms: Herald treats them as unknown.
public enum RequestOperation: UInt32, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// `DNSServiceCreateConnection`: a connection that later requests share.
    case connection = 1
    /// `DNSServiceRegisterRecord` on a shared connection.
    case registerRecord = 2
    /// `DNSServiceRemoveRecord`.
    case removeRecord = 3
    /// `DNSServiceEnumerateDomains`.
    case enumeration = 4
    /// `DNSServiceRegister`.
    case registerService = 5
    /// `DNSServiceBrowse`.
    case browse = 6
    /// `DNSServiceResolve`.
    case resolve = 7
    /// `DNSServiceQueryRecord`.
    case query = 8
    /// `DNSServiceReconfirmRecord`.
    case reconfirm = 9
    /// `DNSServiceAddRecord`.
    case addRecord = 10
    /// `DNSServiceUpdateRecord`.
    case updateRecord = 11
    /// `DNSServiceSetDefaultDomainForUser`.
    case setDomain = 12
    /// `DNSServiceGetProperty`.
    case getProperty = 13
    /// `DNSServiceNATPortMappingCreate`: not supported by Herald.
    case portMapping = 14
    /// `DNSServiceGetAddrInfo`.
    case addrInfo = 15
    /// Stops a subordinate operation of a shared connection.
    case cancel = 63

    /// Operations that act on an operation already running on the connection, so that the daemon refuses
    /// them as the first request of a connection (mDNSResponder's "lightweight" operations).
    public var requiresEstablishedConnection: Bool {
        switch self {
        case .registerRecord, .removeRecord, .addRecord, .updateRecord, .cancel: return true
        default: return false
        }
    }

    public var description: String {
        switch self {
        case .connection: return "connection"
        case .registerRecord: return "register-record"
        case .removeRecord: return "remove-record"
        case .enumeration: return "enumerate-domains"
        case .registerService: return "register-service"
        case .browse: return "browse"
        case .resolve: return "resolve"
        case .query: return "query-record"
        case .reconfirm: return "reconfirm-record"
        case .addRecord: return "add-record"
        case .updateRecord: return "update-record"
        case .setDomain: return "set-default-domain"
        case .getProperty: return "get-property"
        case .portMapping: return "port-mapping"
        case .addrInfo: return "get-addr-info"
        case .cancel: return "cancel"
        }
    }
}
