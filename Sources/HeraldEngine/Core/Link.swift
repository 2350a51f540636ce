import HeraldWire

/// An IP version. mDNS runs separately over each (RFC 6762 §20): a link is one interface with one family.
package enum IPFamily: String, Hashable, Sendable, Comparable, CaseIterable {
    case ipv4, ipv6
    package static func < (lhs: IPFamily, rhs: IPFamily) -> Bool { lhs == .ipv4 && rhs == .ipv6 }

    // Compared and hashed as cases, not through their raw strings (every table keyed by link hashes one).
    package static func == (lhs: IPFamily, rhs: IPFamily) -> Bool {
        switch (lhs, rhs) {
        case (.ipv4, .ipv4), (.ipv6, .ipv6): return true
        default: return false
        }
    }

    package func hash(into hasher: inout Hasher) { hasher.combine(self == .ipv4 ? 4 as UInt8 : 6) }
}

/// One interface used with one IP family: the unit that mDNS caches, probes and rate-limits on.
package struct LinkID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The kernel's interface index.
    package var interfaceIndex: Int
    package var family: IPFamily

    package init(interfaceIndex: Int, family: IPFamily) {
        self.interfaceIndex = interfaceIndex
        self.family = family
    }

    package static func < (lhs: LinkID, rhs: LinkID) -> Bool {
        (lhs.interfaceIndex, lhs.family == .ipv6 ? 1 : 0) < (rhs.interfaceIndex, rhs.family == .ipv6 ? 1 : 0)
    }

    package var description: String { "if\(interfaceIndex)/\(family.rawValue)" }

    package func hash(into hasher: inout Hasher) { hasher.combine(interfaceIndex << 1 | (family == .ipv6 ? 1 : 0)) }
}

/// An IPv4 or IPv6 address.
package enum IPAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    case v4(IPv4Address)
    case v6(IPv6Address)

    package var family: IPFamily {
        switch self {
        case .v4: return .ipv4
        case .v6: return .ipv6
        }
    }

    package var description: String {
        switch self {
        case .v4(let address): return address.description
        case .v6(let address): return address.description
        }
    }

    /// Parses either family's text form.
    package init?(_ text: String) {
        if let v4 = IPv4Address(text) {
            self = .v4(v4)
        } else if let v6 = IPv6Address(text) {
            self = .v6(v6)
        } else {
            return nil
        }
    }

    /// The address record that publishes this address for a host name.
    package var recordData: RecordData {
        switch self {
        case .v4(let address): return .a(address)
        case .v6(let address): return .aaaa(address)
        }
    }

    /// The reverse-mapping name (`in-addr.arpa.` or `ip6.arpa.`).
    package var reverseName: DNSName {
        switch self {
        case .v4(let address): return address.reverseName
        case .v6(let address): return address.reverseName
        }
    }

    package static func < (lhs: IPAddress, rhs: IPAddress) -> Bool {
        switch (lhs, rhs) {
        case (.v4(let a), .v4(let b)): return a < b
        case (.v6(let a), .v6(let b)): return a < b
        case (.v4, .v6): return true
        case (.v6, .v4): return false
        }
    }
}

/// An address and UDP port of a peer.
package struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    package var address: IPAddress
    package var port: UInt16

    package init(_ address: IPAddress, port: UInt16) {
        self.address = address
        self.port = port
    }

    package var description: String {
        switch address {
        case .v4: return "\(address):\(port)"
        case .v6: return "[\(address)]:\(port)"
        }
    }
}

/// An address this host has on a link, with its prefix length (used to check that a sender is on the link).
package struct LinkAddress: Hashable, Sendable {
    package var address: IPAddress
    package var prefixLength: Int

    package init(_ address: IPAddress, prefixLength: Int) {
        self.address = address
        self.prefixLength = prefixLength
    }

    /// True when `other` is in the same subnet (RFC 6762 §11: a response must come from the local link).
    package func sharesSubnet(with other: IPAddress) -> Bool {
        switch (address, other) {
        case (.v4(let mine), .v4(let theirs)):
            let bits = min(max(prefixLength, 0), 32)
            let mask: UInt32 = bits == 0 ? 0 : ~UInt32(0) << (32 - bits)
            return mine.value & mask == theirs.value & mask
        case (.v6(let mine), .v6(let theirs)):
            let bits = min(max(prefixLength, 0), 128)
            let highMask: UInt64 = bits >= 64 ? ~0 : (bits == 0 ? 0 : ~UInt64(0) << (64 - bits))
            let lowMask: UInt64 = bits <= 64 ? 0 : (bits == 128 ? ~0 : ~UInt64(0) << (128 - bits))
            return mine.high & highMask == theirs.high & highMask && mine.low & lowMask == theirs.low & lowMask
        default:
            return false
        }
    }
}
