import HeraldWire

/// A request that needs a permission decision (docs/permissions.md, "Deciding"), as every front end that serves
/// apps asks it (the session core for the app socket, the NSS socket).
package enum PermissionRequest: Hashable, Sendable, CustomStringConvertible {
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

    /// What asking for the records `name`/`type` amounts to (docs/permissions.md, "Record queries and records"):
    /// the one rule by which every front end classifies a query by name, an app's `DNSServiceQueryRecord` and
    /// `DNSServiceGetAddrInfo` (A or AAAA) alike, and NSS host and address lookups (A/AAAA, PTR). In order:
    ///
    /// 1. a name outside `.local` and the reverse-mapping zones is a plain query (refused as `not-local`);
    /// 2. the service type enumeration name: PTR is browsing all types, any other type a query (of all types);
    /// 3. a service type or subtype name: PTR is browsing it, any other type a query (of that type);
    /// 4. a service instance name, whatever the record type, is resolving it;
    /// 5. A or AAAA of any other name under `local.` is an address lookup, however many labels it has;
    /// 6. PTR of a name under `in-addr.arpa.` or `ip6.arpa.` (not the zone itself) is an address lookup;
    /// 7. anything else is a query of an arbitrary name.
    package static func forQuery(name: DNSName, type: RecordType) -> PermissionRequest {
        guard name.isMulticastDNSName else { return .query(name: name, type: type) }
        if ServiceType.isServiceEnumeration(name) {
            return type == .ptr ? .browseAllTypes : .query(name: name, type: type)
        }
        if let serviceType = try? ServiceType(fullName: name) {
            return type == .ptr ? .browse(serviceType) : .query(name: name, type: type)
        }
        if let instance = try? ServiceInstanceName(fullName: name) {
            return .resolve(instance)
        }
        if (type == .a || type == .aaaa) && name.isBelowLocalDomain {
            return .addressLookup(name)
        }
        if type == .ptr && name.isReverseMappingName {
            return .addressLookup(name)
        }
        return .query(name: name, type: type)
    }

    /// The operation, as recorded in pending requests and the audit log.
    package var operation: PermissionOperation {
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
    package var description: String {
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
package enum PermissionOperation: String, Hashable, Sendable, CaseIterable {
    case browse
    case browseAllTypes = "browse-all-types"
    case resolve
    case register
    case query
    case addressLookup = "address-lookup"
    /// Reaching the local network by the app's own sockets, which the kernel rules held back (docs/enforcement.md).
    case localNetwork = "local-network"
}
