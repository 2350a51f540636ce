import CHeraldSystem
import HeraldEngine
import HeraldWire

#if canImport(Glibc)
    import Glibc
#endif

/// One network interface as the daemon sees it.
package struct NetworkInterface: Hashable, Sendable {
    package var name: String
    package var index: Int
    package var isUp: Bool
    package var isLoopback: Bool
    package var supportsMulticast: Bool
    /// The largest packet the interface sends without fragments, IP header included.
    package var mtu: Int
    /// The interface's IPv6 MTU as the kernel keeps it (`net.ipv6.conf.NAME.mtu`, which a router's advertisement
    /// may lower); only a value below `mtu` counts. Read at each scan of the interfaces: the kernel announces no
    /// change of it, so a change is seen at the next change of the interfaces.
    package var ipv6MTU: Int?
    package var addresses: [LinkAddress]

    /// The MTU of the interface's link of `family`.
    package func mtu(for family: IPFamily) -> Int {
        family == .ipv6 ? min(mtu, ipv6MTU ?? mtu) : mtu
    }

    /// The links (interface × family) mDNS would use on it, with their addresses.
    package var links: [LinkID: [LinkAddress]] {
        var result: [LinkID: [LinkAddress]] = [:]
        for family in IPFamily.allCases {
            let addresses = self.addresses.filter { $0.address.family == family }.sorted { $0.address < $1.address }
            if !addresses.isEmpty { result[LinkID(interfaceIndex: index, family: family)] = addresses }
        }
        return result
    }
}

/// Which interfaces mDNS runs on (RFC 6762 §20: every up, multicast-capable, non-loopback interface,
/// narrowed by the configuration's allow and deny lists).
package struct InterfacePolicy: Sendable {
    package var allow: [String]
    package var deny: [String]

    package init(allow: [String] = [], deny: [String] = []) {
        self.allow = allow
        self.deny = deny
    }

    package func accepts(_ interface: NetworkInterface) -> Bool {
        guard interface.isUp, interface.supportsMulticast, !interface.isLoopback else { return false }
        if !allow.isEmpty && !allow.contains(interface.name) { return false }
        return !deny.contains(interface.name)
    }
}

/// Reads the system's interfaces and addresses, and hears from the kernel (rtnetlink) when they change.
package final class InterfaceMonitor {
    /// The netlink socket that wakes the daemon on link and address changes; -1 if it could not be opened.
    package let fd: Int32

    /// Opens the netlink socket subscribed to link, IPv4-address and IPv6-address events.
    package init() {
        let fd = socket(
            AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if fd >= 0 {
            var address = sockaddr_nl()
            address.nl_family = sa_family_t(AF_NETLINK)
            // RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR
            address.nl_groups = 0x1 | 0x10 | 0x100
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_nl>.size))
                }
            }
            if bound != 0 {
                close(fd)
                self.fd = -1
                return
            }
        }
        self.fd = fd
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Empties the netlink socket; returns true when any notification was waiting (the caller re-reads
    /// the interface list rather than decoding each message).
    package func drainNotifications() -> Bool {
        guard fd >= 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: 16_384)
        var any = false
        while recv(fd, &buffer, buffer.count, 0) > 0 { any = true }
        return any
    }

    /// The current interfaces with their usable addresses (not IPv6 addresses still tentative, see
    /// ``TentativeAddresses``).
    package static func snapshot() -> [NetworkInterface] {
        let unusable = TentativeAddresses.current()
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var byName: [String: NetworkInterface] = [:]
        var order: [String] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            let name = String(cString: entry.pointee.ifa_name)
            let flags = entry.pointee.ifa_flags
            if byName[name] == nil {
                byName[name] = NetworkInterface(
                    name: name, index: Int(if_nametoindex(entry.pointee.ifa_name)),
                    isUp: flags & InterfaceFlags.up != 0 && flags & InterfaceFlags.running != 0,
                    isLoopback: flags & InterfaceFlags.loopback != 0,
                    supportsMulticast: flags & InterfaceFlags.multicast != 0,
                    mtu: Self.mtu(of: entry.pointee.ifa_name), ipv6MTU: Self.ipv6MTU(of: name), addresses: [])
                order.append(name)
            }
            guard let address = entry.pointee.ifa_addr else { continue }
            if let parsed = Self.address(address), let mask = entry.pointee.ifa_netmask {
                if case .v6(let v6) = parsed,
                    unusable.contains(TentativeAddresses.Entry(interfaceIndex: byName[name]!.index, address: v6))
                {
                    continue
                }
                let prefix = Self.prefixLength(mask)
                byName[name]!.addresses.append(LinkAddress(parsed, prefixLength: prefix))
            }
        }
        return order.compactMap { byName[$0] }.filter { $0.index > 0 }
    }

    /// The interface's MTU, or an Ethernet frame's when the kernel does not say.
    private static func mtu(of name: UnsafePointer<CChar>) -> Int {
        let mtu = herald_interface_mtu(name)
        return mtu > 0 ? Int(mtu) : MessageSizeLimit.ethernetMTU
    }

    /// The interface's IPv6 MTU as the kernel keeps it (nil without IPv6 on it, or an unreadable value).
    private static func ipv6MTU(of name: String) -> Int? {
        guard !name.contains("/"), let file = fopen("/proc/sys/net/ipv6/conf/\(name)/mtu", "re") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 32)
        guard fgets(&line, Int32(line.count), file) != nil else { return nil }
        let digits = line.prefix { $0 >= 0x30 && $0 <= 0x39 }.map { UInt8(bitPattern: $0) }
        guard let value = Int(String(decoding: digits, as: UTF8.self)), value >= 1280 else { return nil }
        return value
    }

    private static func address(_ pointer: UnsafeMutablePointer<sockaddr>) -> IPAddress? {
        switch Int32(pointer.pointee.sa_family) {
        case AF_INET:
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                .v4(IPv4Address(UInt32(bigEndian: $0.pointee.sin_addr.s_addr)))
            }
        case AF_INET6:
            return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                let bytes = withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                return IPv6Address(bytes: bytes).map { .v6($0) }
            }
        default:
            return nil
        }
    }

    private static func prefixLength(_ mask: UnsafeMutablePointer<sockaddr>) -> Int {
        switch Int32(mask.pointee.sa_family) {
        case AF_INET:
            return mask.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                $0.pointee.sin_addr.s_addr.nonzeroBitCount
            }
        case AF_INET6:
            return mask.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                withUnsafeBytes(of: pointer.pointee.sin6_addr) { $0.reduce(0) { $0 + $1.nonzeroBitCount } }
            }
        default:
            // getifaddrs leaves the mask's family unset on some kernels; fall back to host routes.
            return 0
        }
    }
}

/// Interface flags of <net/if.h>, by value (the header's enum and linux/if.h's macros import differently).
enum InterfaceFlags {
    static let up: UInt32 = 0x1
    static let loopback: UInt32 = 0x8
    static let running: UInt32 = 0x40
    static let multicast: UInt32 = 0x1000
}
