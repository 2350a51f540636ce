import HeraldWire

/// A request that needs a permission decision (docs/permissions.md, "Deciding"): the broker's own mirror of the
/// daemon's gated requests, so that the broker depends on nothing above it.
public enum PermissionRequest: Hashable, Sendable, CustomStringConvertible {
    /// Browsing one service type, or a subtype of it.
    case browse(ServiceType)
    /// Browsing every service type (`_services._dns-sd._udp.local`).
    case browseAllTypes
    /// Resolving one service instance.
    case resolve(ServiceInstanceName)
    /// Advertising a service of a type.
    case register(ServiceType)
    /// A record query for any name and type.
    case query(name: DNSName, type: RecordType)
    /// An address lookup: A/AAAA of `name.local`, or the name of an address (a reverse PTR).
    case addressLookup(DNSName)
    /// Publishing a record of any name that is not a service of a type (DNSServiceRegisterRecord), such as a host's
    /// address: advertising under an arbitrary name.
    case publishRecord(name: DNSName, type: RecordType)

    /// The operation, as recorded in pending requests and the audit log.
    public var operation: PermissionOperation {
        switch self {
        case .browse: return .browse
        case .browseAllTypes: return .browseAllTypes
        case .resolve: return .resolve
        case .register, .publishRecord: return .register
        case .query: return .query
        case .addressLookup: return .addressLookup
        }
    }

    /// `browse _tictactoe._tcp`, `query printer.local. TXT`.
    public var description: String {
        switch self {
        case .browse(let type): return "browse \(type)"
        case .browseAllTypes: return "browse all service types"
        case .resolve(let instance): return "resolve \(instance)"
        case .register(let type): return "register \(type)"
        case .query(let name, let type): return "query \(name) \(type)"
        case .addressLookup(let name): return "look up \(name)"
        case .publishRecord(let name, let type): return "publish \(name) \(type)"
        }
    }
}

/// The kinds of request, with the stable names used in the store and in `--json` output.
public enum PermissionOperation: String, Hashable, Sendable, CaseIterable {
    case browse
    case browseAllTypes = "browse-all-types"
    case resolve
    case register
    case query
    case addressLookup = "address-lookup"
}
