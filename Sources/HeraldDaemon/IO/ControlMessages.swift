import CHeraldSystem
import HeraldEngine
import HeraldWire

#if canImport(Glibc)
    import Glibc
#endif

/// Reads and writes the ancillary data (cmsg) of UDP sockets by hand, since glibc's CMSG_* macros do not
/// reach Swift. Layout on Linux: `struct cmsghdr { size_t len; int level; int type; }` then data, each
/// message padded to the alignment of size_t.
enum ControlMessages {
    private static let alignment = MemoryLayout<Int>.size
    private static let headerSize = (MemoryLayout<Int>.size + 8 + alignment - 1) & ~(alignment - 1)

    static func align(_ length: Int) -> Int { (length + alignment - 1) & ~(alignment - 1) }

    /// Where a packet arrived: the interface index and whether it was addressed to a multicast group.
    struct PacketInfo {
        var interfaceIndex: Int
        var toMulticast: Bool
    }

    /// Finds IP_PKTINFO (`struct in_pktinfo { int ifindex; in_addr spec_dst; in_addr addr; }`) or
    /// IPV6_PKTINFO (`struct in6_pktinfo { in6_addr addr; unsigned ifindex; }`) in received control data.
    static func packetInfo(in control: [UInt8], family: IPFamily) -> PacketInfo? {
        var offset = 0
        while offset + headerSize <= control.count {
            let length = Int(readInt(control, offset, size: MemoryLayout<Int>.size))
            let level = Int32(truncatingIfNeeded: readInt(control, offset + MemoryLayout<Int>.size, size: 4))
            let type = Int32(truncatingIfNeeded: readInt(control, offset + MemoryLayout<Int>.size + 4, size: 4))
            guard length >= headerSize, offset + length <= control.count else { return nil }
            let data = offset + headerSize
            if family == .ipv4, level == Int32(IPPROTO_IP), type == LinuxSocketOptions.ipPacketInfo,
                length - headerSize >= 12
            {
                let index = Int(Int32(truncatingIfNeeded: readInt(control, data, size: 4)))
                let firstOctet = control[data + 8]  // ipi_addr: the header's destination address
                return PacketInfo(interfaceIndex: index, toMulticast: firstOctet >= 224 && firstOctet <= 239)
            }
            if family == .ipv6, level == Int32(IPPROTO_IPV6), type == LinuxSocketOptions.ipv6PacketInfo,
                length - headerSize >= 20
            {
                let index = Int(UInt32(truncatingIfNeeded: readInt(control, data + 16, size: 4)))
                return PacketInfo(interfaceIndex: index, toMulticast: control[data] == 0xFF)
            }
            offset += align(length)
        }
        return nil
    }

    /// The control data that makes sendmsg use an interface: IP_PKTINFO / IPV6_PKTINFO with only the index set.
    static func packetInfoMessage(family: IPFamily, interfaceIndex: Int) -> [UInt8] {
        let dataSize = family == .ipv4 ? 12 : 20
        let length = headerSize + dataSize
        var control = [UInt8](repeating: 0, count: align(length))
        writeInt(&control, 0, UInt64(length), size: MemoryLayout<Int>.size)
        if family == .ipv4 {
            writeInt(&control, MemoryLayout<Int>.size, UInt64(IPPROTO_IP), size: 4)
            writeInt(&control, MemoryLayout<Int>.size + 4, UInt64(LinuxSocketOptions.ipPacketInfo), size: 4)
            writeInt(&control, headerSize, UInt64(UInt32(interfaceIndex)), size: 4)
        } else {
            writeInt(&control, MemoryLayout<Int>.size, UInt64(IPPROTO_IPV6), size: 4)
            writeInt(&control, MemoryLayout<Int>.size + 4, UInt64(LinuxSocketOptions.ipv6PacketInfo), size: 4)
            writeInt(&control, headerSize + 16, UInt64(UInt32(interfaceIndex)), size: 4)
        }
        return control
    }

    /// Reads a host-order integer of `size` bytes.
    private static func readInt(_ bytes: [UInt8], _ offset: Int, size: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<size { value |= UInt64(bytes[offset + index]) << (8 * index) }  // little-endian hosts
        return value
    }

    private static func writeInt(_ bytes: inout [UInt8], _ offset: Int, _ value: UInt64, size: Int) {
        for index in 0..<size { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
    }
}

/// Conversions between the engine's socket addresses and the kernel's sockaddr structures.
enum SocketAddressConversion {
    static func address(from storage: sockaddr_storage) -> HeraldEngine.SocketAddress? {
        var storage = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                    let value = UInt32(bigEndian: pointer.pointee.sin_addr.s_addr)
                    return HeraldEngine.SocketAddress(
                        .v4(IPv4Address(value)), port: UInt16(bigEndian: pointer.pointee.sin_port))
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    let bytes = withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                    guard let address = IPv6Address(bytes: bytes) else { return nil }
                    return HeraldEngine.SocketAddress(.v6(address), port: UInt16(bigEndian: pointer.pointee.sin6_port))
                }
            }
        default:
            return nil
        }
    }

    /// A sockaddr for `address`; IPv6 link-local destinations get the interface as their scope.
    static func storage(for address: HeraldEngine.SocketAddress, scope: Int) -> sockaddr_storage {
        var storage = sockaddr_storage()
        switch address.address {
        case .v4(let v4):
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                    pointer.pointee.sin_family = sa_family_t(AF_INET)
                    pointer.pointee.sin_port = address.port.bigEndian
                    pointer.pointee.sin_addr.s_addr = v4.value.bigEndian
                }
            }
        case .v6(let v6):
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    pointer.pointee.sin6_family = sa_family_t(AF_INET6)
                    pointer.pointee.sin6_port = address.port.bigEndian
                    withUnsafeMutableBytes(of: &pointer.pointee.sin6_addr) { raw in
                        for (index, byte) in v6.bytes.enumerated() { raw[index] = byte }
                    }
                    let scoped = v6.isLinkLocal || v6.high >> 56 == 0xFF
                    pointer.pointee.sin6_scope_id = scoped ? UInt32(scope) : 0
                }
            }
        }
        return storage
    }
}
