import HeraldEngine
import HeraldIPC

/// Avahi's protocol numbers (`AvahiProtocol`): the IP family a request is about, or a result came from.
package enum AvahiProtocol: Int32, Sendable {
    case unspecified = -1
    case inet = 0
    case inet6 = 1

    /// The family of an address record: A is IPv4, AAAA IPv6.
    package init?(recordType: UInt16) {
        switch recordType {
        case 1: self = .inet
        case 28: self = .inet6
        default: return nil
        }
    }

    /// The protocol of an IP family.
    package init(_ family: IPFamily) {
        self = family == .ipv4 ? .inet : .inet6
    }

    /// The families a dnssd address lookup asks for.
    package var dnssdProtocols: DNSServiceProtocol {
        switch self {
        case .unspecified: [.ipv4, .ipv6]
        case .inet: .ipv4
        case .inet6: .ipv6
        }
    }
}

/// Avahi's interface numbers (`AvahiIfIndex`): the kernel's index, or -1 for every interface.
package enum AvahiInterface {
    package static let unspecified: Int32 = -1

    /// The dnssd interface index for an Avahi one (0: every interface); nil for a negative number other than -1.
    package static func dnssdIndex(_ interface: Int32) -> UInt32? {
        if interface == unspecified { return 0 }
        return interface >= 0 ? UInt32(interface) : nil
    }
}

/// Avahi's `AvahiLookupResultFlags`, carried by `ItemNew`, `ItemRemove` and `Found`.
package struct AvahiLookupResultFlags: OptionSet, Sendable {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }
    package static let cached = AvahiLookupResultFlags(rawValue: 1)
    package static let wideArea = AvahiLookupResultFlags(rawValue: 2)
    package static let multicast = AvahiLookupResultFlags(rawValue: 4)
    package static let local = AvahiLookupResultFlags(rawValue: 8)
    package static let ourOwn = AvahiLookupResultFlags(rawValue: 16)
    package static let `static` = AvahiLookupResultFlags(rawValue: 32)
}

/// Avahi's `AvahiLookupFlags`, given to browsers and resolvers.
package struct AvahiLookupFlags: OptionSet, Sendable {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }
    package static let useWideArea = AvahiLookupFlags(rawValue: 1)
    package static let useMulticast = AvahiLookupFlags(rawValue: 2)
    package static let noTXT = AvahiLookupFlags(rawValue: 4)
    package static let noAddress = AvahiLookupFlags(rawValue: 8)
    /// Every flag Avahi defines; others are refused with InvalidFlagsError.
    package static let known: AvahiLookupFlags = [.useWideArea, .useMulticast, .noTXT, .noAddress]
}

/// Avahi's `AvahiPublishFlags`, given to an entry group's additions.
package struct AvahiPublishFlags: OptionSet, Sendable {
    package let rawValue: UInt32
    package init(rawValue: UInt32) { self.rawValue = rawValue }
    package static let unique = AvahiPublishFlags(rawValue: 1)
    package static let noProbe = AvahiPublishFlags(rawValue: 2)
    package static let noAnnounce = AvahiPublishFlags(rawValue: 4)
    package static let allowMultiple = AvahiPublishFlags(rawValue: 8)
    package static let noReverse = AvahiPublishFlags(rawValue: 16)
    package static let noCookie = AvahiPublishFlags(rawValue: 32)
    package static let update = AvahiPublishFlags(rawValue: 64)
    package static let useWideArea = AvahiPublishFlags(rawValue: 128)
    package static let useMulticast = AvahiPublishFlags(rawValue: 256)
    package static let known = AvahiPublishFlags(rawValue: 511)
}

/// Avahi's `AvahiEntryGroupState`, as `GetState` and `StateChanged` carry it.
package enum AvahiEntryGroupState: Int32, Sendable {
    case uncommitted = 0
    case registering = 1
    case established = 2
    case collision = 3
    case failure = 4
}

/// Avahi's `AvahiServerState`: Herald's server is always running once it serves the bus.
package enum AvahiServerState: Int32, Sendable {
    case invalid = 0
    case registering = 1
    case running = 2
    case collision = 3
    case failure = 4
}
