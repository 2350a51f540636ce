import HeraldWire

/// An address block, `address/length`, with the host bits cleared.
package struct IPPrefix: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// An IPv4 or IPv6 address.
    package enum Address: Hashable, Sendable, Comparable, CustomStringConvertible {
        case v4(IPv4Address)
        case v6(IPv6Address)

        package var description: String {
            switch self {
            case .v4(let address): return address.description
            case .v6(let address): return address.description
            }
        }
    }

    package let address: Address
    package let length: Int

    /// The block of `length` bits that holds `address`.
    package init(_ address: Address, length: Int) {
        switch address {
        case .v4(let v4):
            let length = max(0, min(32, length))
            let mask: UInt32 = length == 0 ? 0 : ~0 << (32 - length)
            self.address = .v4(IPv4Address(v4.value & mask))
            self.length = length
        case .v6(let v6):
            let length = max(0, min(128, length))
            let highMask: UInt64 = length == 0 ? 0 : length >= 64 ? ~0 : ~0 << (64 - length)
            let lowMask: UInt64 = length <= 64 ? 0 : length == 128 ? ~0 : ~0 << (128 - length)
            self.address = .v6(IPv6Address(high: v6.high & highMask, low: v6.low & lowMask))
            self.length = length
        }
    }

    /// True for an IPv4 block.
    package var isIPv4: Bool {
        if case .v4 = address { return true }
        return false
    }

    /// `a.b.c.d/n` or `x::/n`; a single address without its length.
    package var description: String {
        let full = isIPv4 ? 32 : 128
        return length == full ? "\(address)" : "\(address)/\(length)"
    }

    package static func < (lhs: IPPrefix, rhs: IPPrefix) -> Bool {
        (lhs.address, lhs.length) < (rhs.address, rhs.length)
    }
}

/// What "the local network" is for the kernel rules, computed from the interfaces' addresses: unicast blocks an app
/// may reach only when granted, and group destinations (multicast, broadcast) it may reach only with the multicast
/// entitlement as well.
package struct LocalNetworks: Hashable, Sendable {
    /// Each interface's IPv4 subnets and the link-local block.
    package private(set) var unicast4: [IPPrefix]
    /// IPv4 multicast, the limited broadcast address and each subnet's broadcast address.
    package private(set) var group4: [IPPrefix]
    /// Each interface's IPv6 prefixes and the link-local block.
    package private(set) var unicast6: [IPPrefix]
    /// IPv6 multicast.
    package private(set) var group6: [IPPrefix]

    /// 169.254.0.0/16 (RFC 3927).
    package static let linkLocal4 = IPPrefix(.v4(IPv4Address(169, 254, 0, 0)), length: 16)
    /// 224.0.0.0/4 (RFC 5771).
    package static let multicast4 = IPPrefix(.v4(IPv4Address(224, 0, 0, 0)), length: 4)
    /// 255.255.255.255 (RFC 919).
    package static let limitedBroadcast = IPPrefix(.v4(IPv4Address(255, 255, 255, 255)), length: 32)
    /// fe80::/10 (RFC 4291 §2.5.6).
    package static let linkLocal6 = IPPrefix(.v6(IPv6Address(high: 0xfe80 << 48, low: 0)), length: 10)
    /// ff00::/8 (RFC 4291 §2.7).
    package static let multicast6 = IPPrefix(.v6(IPv6Address(high: 0xff00 << 48, low: 0)), length: 8)

    /// The local networks of interfaces with these addresses (each with its prefix length), loopback left out.
    /// Blocks inside another block are folded into it, so the result is the same whatever the order.
    package init(addresses: [(address: IPPrefix.Address, prefixLength: Int)]) {
        var unicast4: Set<IPPrefix> = [Self.linkLocal4]
        var group4: Set<IPPrefix> = [Self.multicast4, Self.limitedBroadcast]
        var unicast6: Set<IPPrefix> = [Self.linkLocal6]
        for (address, length) in addresses {
            switch address {
            case .v4(let v4):
                // 127/8 is the host itself; a /32 or /31 has no neighbours to protect (RFC 3021) and no broadcast.
                if v4.value >> 24 == 127 || length >= 31 || length <= 0 { continue }
                unicast4.insert(IPPrefix(address, length: length))
                let hostBits: UInt32 = ~0 >> length
                group4.insert(IPPrefix(.v4(IPv4Address(v4.value | hostBits)), length: 32))
            case .v6(let v6):
                if v6 == IPv6Address(high: 0, low: 1) || length >= 127 || length <= 0 { continue }
                unicast6.insert(IPPrefix(address, length: length))
            }
        }
        self.unicast4 = Self.folded(unicast4)
        self.group4 = Self.folded(group4)
        self.unicast6 = Self.folded(unicast6)
        self.group6 = [Self.multicast6]
    }

    /// The blocks in order, without those that lie inside another.
    private static func folded(_ blocks: Set<IPPrefix>) -> [IPPrefix] {
        let sorted = blocks.sorted()
        return sorted.filter { block in
            !sorted.contains { other in other != block && other.length <= block.length && other.contains(block) }
        }
    }
}

extension IPPrefix {
    /// True when `other` lies inside this block.
    func contains(_ other: IPPrefix) -> Bool {
        guard other.length >= length else { return false }
        switch (address, other.address) {
        case (.v4, .v4), (.v6, .v6): return IPPrefix(other.address, length: length).address == address
        default: return false
        }
    }
}
