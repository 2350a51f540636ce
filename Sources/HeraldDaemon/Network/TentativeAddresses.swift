import CHeraldSystem
import HeraldWire

#if canImport(Glibc)
    import Glibc
#endif

/// IPv6 addresses that cannot be used yet: still tentative while duplicate address detection runs (RFC 4862 §5.4),
/// or found to be duplicates. Sending from one fails, so mDNS leaves them out until the kernel reports them ready
/// (it sends an address notification then, and the interfaces are read again). getifaddrs(3) does not tell, so
/// the addresses are asked of the kernel over rtnetlink.
enum TentativeAddresses {
    /// Address flags of <linux/if_addr.h>.
    static let tentative: UInt32 = 0x40
    static let duplicateDetected: UInt32 = 0x08
    /// Optimistic duplicate address detection (RFC 4429): the address is tentative, yet usable meanwhile.
    static let optimistic: UInt32 = 0x04

    /// The unusable IPv6 addresses, by interface index; empty when the kernel cannot be asked.
    static func current() -> Set<Entry> {
        let fd = socket(AF_NETLINK, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // struct nlmsghdr (16 bytes) + struct ifaddrmsg (8 bytes): RTM_GETADDR, NLM_F_REQUEST | NLM_F_DUMP, AF_INET6.
        var request = [UInt8](repeating: 0, count: 24)
        put32(&request, 0, 24)
        put16(&request, 4, 22)
        put16(&request, 6, 0x0001 | 0x0300)
        put32(&request, 8, 1)
        request[16] = UInt8(AF_INET6)
        guard send(fd, request, request.count, 0) == request.count else { return [] }
        var found: Set<Entry> = []
        var buffer = [UInt8](repeating: 0, count: 32_768)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { return found }
            switch parse(Array(buffer[..<count])) {
            case .more(let entries): found.formUnion(entries)
            case .done(let entries): return found.union(entries)
            }
        }
    }

    /// One unusable address.
    struct Entry: Hashable {
        var interfaceIndex: Int
        var address: IPv6Address
    }

    enum Batch: Equatable {
        case more(Set<Entry>)
        case done(Set<Entry>)
    }

    /// The unusable addresses in one datagram of an RTM_GETADDR dump; `.done` once NLMSG_DONE or an error ends it.
    static func parse(_ bytes: [UInt8]) -> Batch {
        var entries: Set<Entry> = []
        var offset = 0
        while offset + 16 <= bytes.count {
            let length = Int(read32(bytes, offset))
            let type = read16(bytes, offset + 4)
            guard length >= 16, offset + length <= bytes.count else { break }
            if type == 3 || type == 2 { return .done(entries) }  // NLMSG_DONE, NLMSG_ERROR
            if type == 20, length >= 24, bytes[offset + 16] == UInt8(AF_INET6) {  // RTM_NEWADDR
                var flags = UInt32(bytes[offset + 18])
                let index = Int(read32(bytes, offset + 20))
                var address: IPv6Address?
                var local: IPv6Address?
                var attribute = offset + 24
                while attribute + 4 <= offset + length {
                    let attributeLength = Int(read16(bytes, attribute))
                    let attributeType = read16(bytes, attribute + 2)
                    guard attributeLength >= 4, attribute + attributeLength <= offset + length else { break }
                    let value = Array(bytes[(attribute + 4)..<(attribute + attributeLength)])
                    // The host's own address is IFA_LOCAL when given (IFA_ADDRESS is then the peer's, on
                    // point-to-point links), as getifaddrs(3) reports it; else IFA_ADDRESS.
                    if attributeType == 1 {  // IFA_ADDRESS
                        address = IPv6Address(bytes: value)
                    } else if attributeType == 2 {  // IFA_LOCAL
                        local = IPv6Address(bytes: value)
                    } else if attributeType == 8, value.count == 4 {  // IFA_FLAGS: all 32 bits
                        flags = read32(value, 0)
                    }
                    attribute += (attributeLength + 3) & ~3
                }
                let unusable = flags & duplicateDetected != 0 || (flags & tentative != 0 && flags & optimistic == 0)
                if let address = local ?? address, unusable {
                    entries.insert(Entry(interfaceIndex: index, address: address))
                }
            }
            offset += (length + 3) & ~3
        }
        return .more(entries)
    }

    private static func read16(_ bytes: [UInt8], _ at: Int) -> UInt16 {
        UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
    }

    private static func read32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }

    private static func put16(_ bytes: inout [UInt8], _ at: Int, _ value: UInt16) {
        bytes[at] = UInt8(value & 0xFF)
        bytes[at + 1] = UInt8(value >> 8)
    }

    private static func put32(_ bytes: inout [UInt8], _ at: Int, _ value: UInt32) {
        for byte in 0..<4 { bytes[at + byte] = UInt8((value >> (8 * UInt32(byte))) & 0xFF) }
    }
}
