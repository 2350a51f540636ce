import HeraldWire

/// What a request touches, as far as the permission rules care: the service type it concerns, all types, an
/// address, an arbitrary name, or something outside the local network.
///
/// Record queries are classified by their name: the service type enumeration name counts as browsing all
/// types; a service type, subtype or instance name counts as that service type (so a query for another app's
/// service name is judged by that app's type); A/AAAA of a name in `.local` is an address lookup; anything
/// else in the local zones is an arbitrary name. DNS-SD's own type, `_dns-sd._udp`, is never a declared service:
/// whatever names it counts as all types. A record published under a name that is not a service's is an arbitrary
/// name wherever it is, so that no app can publish a host's address in place of that host.
public enum RequestTarget: Hashable, Sendable {
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

    /// The domain multicast DNS serves (RFC 6762 §3).
    public static let localDomain: DNSName = "local."
    /// The reverse zones. Herald answers reverse names only by multicast DNS (hosts publish reverse PTRs for
    /// all their addresses, RFC 6762 §4), so every reverse lookup it serves reveals who is on the local network.
    public static let reverseZones: [DNSName] = ["in-addr.arpa.", "ip6.arpa."]

    /// True when `name` is in `.local` or a reverse zone: the names the rules cover.
    public static func isLocal(_ name: DNSName) -> Bool {
        name.hasSuffix(localDomain) || reverseZones.contains { name.hasSuffix($0) }
    }

    /// The target of `request`.
    public init(_ request: PermissionRequest) {
        switch request {
        case .browse(let type), .register(let type):
            self = Self.isLocal(type.domain) ? Self.target(of: type) : .notLocal
        case .browseAllTypes:
            self = .allServiceTypes
        case .resolve(let instance):
            self = Self.isLocal(instance.domain) ? Self.target(of: instance.type) : .notLocal
        case .addressLookup(let name):
            let isHost = name.hasSuffix(Self.localDomain) && name != Self.localDomain
            let isAddress = Self.reverseZones.contains { name.hasSuffix($0) && name != $0 }
            self = isHost || isAddress ? .address(name) : .notLocal
        case .query(let name, let type):
            self = Self.classify(query: name, type: type)
        case .publishRecord(let name, let type):
            self = .arbitraryName(name, type)
        }
    }

    /// A service type's target: the type itself, or all types for DNS-SD's own.
    private static func target(of type: ServiceType) -> RequestTarget {
        type.isDNSSDItself ? .allServiceTypes : .serviceType(type.baseType)
    }

    private static func classify(query name: DNSName, type: RecordType) -> RequestTarget {
        guard isLocal(name) else { return .notLocal }
        if ServiceType.isServiceEnumeration(name) { return .allServiceTypes }
        if let serviceType = try? ServiceType(fullName: name) { return target(of: serviceType) }
        if let instance = try? ServiceInstanceName(fullName: name) { return target(of: instance.type) }
        if (type == .a || type == .aaaa), name.hasSuffix(localDomain), name != localDomain {
            return .address(name)
        }
        // A reverse lookup (who has this address?) is judged like an address lookup.
        if type == .ptr, reverseZones.contains(where: { name.hasSuffix($0) && name != $0 }) {
            return .address(name)
        }
        return .arbitraryName(name, type)
    }

    /// The service type in the form recorded for people: `_tictactoe._tcp` (lower case); nil when the target
    /// is not one service type.
    public var serviceTypeText: String? {
        guard case .serviceType(let type) = self else { return nil }
        return type.description.lowercased()
    }

    /// What was asked, normalised so that repeats of the same thing deduplicate in pending requests: the
    /// service type (an instance counts as its type), the enumeration name, the host name, or `name TYPE`.
    public var subject: String {
        switch self {
        case .serviceType: return serviceTypeText ?? ""
        case .allServiceTypes: return "_services._dns-sd._udp"
        case .address(let name): return name.lowercased.description
        case .arbitraryName(let name, let type): return name.lowercased.description + " " + type.description
        case .notLocal: return ""
        }
    }
}
