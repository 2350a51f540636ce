import HeraldWire

/// What a request touches, as far as the permission rules care: the service type it concerns, all types, an
/// address, an arbitrary name, or something outside the local network.
///
/// What a record query is comes from ``PermissionRequest/forQuery(name:type:)``, the one rule every front end uses:
/// a query that it calls a browse, resolve or address lookup touches what that request touches. What remains a
/// query touches the type its name names (the enumeration name: all types; a service type or subtype name: that
/// type), or else an arbitrary name. DNS-SD's own type, `_dns-sd._udp`, is never a declared service: whatever
/// names it counts as all types. A record published under a name that is not a service's is an arbitrary name
/// wherever it is, so that no app can publish a host's address in place of that host.
package enum RequestTarget: Hashable, Sendable {
    /// A service type (its plain form: no subtype).
    case serviceType(ServiceType)
    /// Every service type (`_services._dns-sd._udp.local`).
    case allServiceTypes
    /// The addresses of a host name in `.local`, or the name of an address (a reverse PTR lookup).
    case address(DNSName)
    /// A name that is neither a service nor a host address query.
    case arbitraryName(DNSName, RecordType)
    /// Outside `.local` and the reverse zones: not the permission model's business.
    case notLocal

    /// The target of `request`.
    package init(_ request: PermissionRequest) {
        switch request {
        case .browse(let type), .register(let type):
            self = type.domain.isMulticastDNSName ? Self.target(of: type) : .notLocal
        case .browseAllTypes:
            self = .allServiceTypes
        case .resolve(let instance):
            self = instance.domain.isMulticastDNSName ? Self.target(of: instance.type) : .notLocal
        case .addressLookup(let name):
            self = name.isBelowLocalDomain || name.isReverseMappingName ? .address(name) : .notLocal
        case .query(let name, let type):
            self = Self.target(ofQuery: name, type: type)
        case .publishRecord(let name, let type):
            self = .arbitraryName(name, type)
        }
    }

    /// A service type's target: the type itself, or all types for DNS-SD's own.
    private static func target(of type: ServiceType) -> RequestTarget {
        type.isDNSSDItself ? .allServiceTypes : .serviceType(type.baseType)
    }

    /// A query's target: that of the request ``PermissionRequest/forQuery(name:type:)`` makes of it, or, for what
    /// stays a query, the type its name names.
    private static func target(ofQuery name: DNSName, type: RecordType) -> RequestTarget {
        let request = PermissionRequest.forQuery(name: name, type: type)
        guard request == .query(name: name, type: type) else { return RequestTarget(request) }
        guard name.isMulticastDNSName else { return .notLocal }
        if ServiceType.isServiceEnumeration(name) { return .allServiceTypes }
        if let serviceType = try? ServiceType(fullName: name) { return target(of: serviceType) }
        return .arbitraryName(name, type)
    }

    /// The service type in the form recorded for people: `_tictactoe._tcp` (lower case); nil when the target
    /// is not one service type.
    package var serviceTypeText: String? {
        guard case .serviceType(let type) = self else { return nil }
        return type.description.lowercased()
    }

    /// What was asked, normalised so that repeats of the same thing deduplicate in pending requests: the
    /// service type (an instance counts as its type), the enumeration name, the host name, or `name TYPE`.
    package var subject: String {
        switch self {
        case .serviceType: return serviceTypeText ?? ""
        case .allServiceTypes: return "_services._dns-sd._udp"
        case .address(let name): return name.lowercased.description
        case .arbitraryName(let name, let type): return name.lowercased.description + " " + type.description
        case .notLocal: return ""
        }
    }
}
